// A removed engine node leaves no rows kept for it alone (issue 25, docs/nodes.md): what its
// engine runs (`node_applied_revisions`) and what it had deployed of each org's requests
// (`node_deploy_requests`) have no foreign key, so the removal deletes them in its transaction,
// and migration 3023 deletes those an earlier version left behind. Other nodes' rows, the one
// implicit engine's applied revisions and the removed node's deploy records (history) stay. On
// both backends (SQLite here, PostgreSQL with `npm run test:pg`).
import { randomBytes, randomUUID } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createEngineNode, deleteEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import type { Db } from "../../src/store/database.js";
import { createDeployRecordRepository } from "../../src/store/deploy-record-repository.js";
import { createDeployRequestRepository } from "../../src/store/deploy-request-repository.js";
import { engineNodeInput, freshStore, migratedTo } from "./helpers.js";

const serverKey = randomBytes(32);
const clock = () => new Date("2026-11-27T13:00:00.000Z");
const at = clock().toISOString();
const ORG = randomUUID();

/** What node `nodeId` (absent: the implicit engine) deploys and runs, as its deployer writes it. */
async function deployedOn(db: Db, nodeId: string | undefined, unit: string): Promise<void> {
  const records = createDeployRecordRepository(db, nodeId);
  const id = randomUUID();
  await records.insertRecord({
    id,
    unit,
    revision: "r1",
    result: "ok",
    trigger: "deploy",
    started_at: at,
    record: "{}",
  });
  await records.upsertApplied({
    unit,
    revision: "r1",
    applied_at: at,
    deploy_id: id,
    files: "{}",
    stats: null,
  });
  if (nodeId !== undefined) await createDeployRequestRepository(db).done(ORG, 1, nodeId);
}

/** Each table's rows, as `<node id> <unit or org>` sorted, node ids named by `names`. */
async function rowsKept(db: Db, names: Map<string, string>) {
  const named = (id: string) => names.get(id) ?? id;
  const tables = db.withTables<{
    node_applied_revisions: { node_id: string; unit: string };
    deploy_records: { node_id: string; unit: string };
    applied_revisions: { unit: string };
  }>();
  const applied = await tables
    .selectFrom("node_applied_revisions")
    .select(["node_id", "unit"])
    .execute();
  const requests = await db
    .selectFrom("node_deploy_requests")
    .select(["node_id", "org_id"])
    .execute();
  const records = await tables.selectFrom("deploy_records").select(["node_id", "unit"]).execute();
  const implicit = await tables.selectFrom("applied_revisions").select("unit").execute();
  return {
    applied: applied.map((r) => `${named(r.node_id)} ${r.unit}`).sort(),
    requests: requests
      .map((r) => `${named(r.node_id)} ${r.org_id === ORG ? "org" : r.org_id}`)
      .sort(),
    records: records.map((r) => `${named(r.node_id) || "implicit"} ${r.unit}`).sort(),
    implicitApplied: implicit.map((r) => r.unit),
  };
}

async function withStore(run: (db: Db) => Promise<void>): Promise<void> {
  const store = await freshStore();
  try {
    await run(store.db);
  } finally {
    await store.close();
  }
}

test("removing a node deletes what it ran and what it had deployed of the orgs' requests; others' rows and its history stay", () =>
  withStore(async (db) => {
    const deps = { db, config: { serverKey }, clock };
    const one = await createEngineNode(deps, engineNodeInput("node-1"));
    const two = await createEngineNode(deps, engineNodeInput("node-2"));
    await deployedOn(db, undefined, "gateway");
    await deployedOn(db, one.id, "gateway");
    await deployedOn(db, two.id, "gateway");
    await deployedOn(db, two.id, "top");
    const names = new Map([
      [one.id, "node-1"],
      [two.id, "node-2"],
    ]);
    assert.equal((await rowsKept(db, names)).applied, [
      "node-1 gateway",
      "node-2 gateway",
      "node-2 top",
    ]);
    assert.equal((await rowsKept(db, names)).requests, ["node-1 org", "node-2 org"]);

    await deleteEngineNode(deps, "node-2");
    assert.equal(await rowsKept(db, names), {
      applied: ["node-1 gateway"],
      requests: ["node-1 org"],
      records: ["implicit gateway", "node-1 gateway", "node-2 gateway", "node-2 top"],
      implicitApplied: ["gateway"],
    });
  }));

test("migration 3023 deletes the rows an earlier version left of removed nodes, and no other", () =>
  withStore(async (db) => {
    const migrator = await migratedTo(db, "3022-realtime-debt-of-gone-engines");
    const deps = { db, config: { serverKey }, clock };
    const one = await createEngineNode(deps, engineNodeInput("node-1"));
    // As an earlier version left them: rows of a node removed since (its id in no node row).
    const gone = randomUUID();
    await deployedOn(db, undefined, "gateway");
    await deployedOn(db, one.id, "gateway");
    await deployedOn(db, gone, "gateway");
    await deployedOn(db, gone, "top");
    const names = new Map([
      [one.id, "node-1"],
      [gone, "gone"],
    ]);
    assert.equal((await rowsKept(db, names)).requests, ["gone org", "node-1 org"]);

    const latest = await migrator.migrateToLatest();
    assert.is(latest.error, undefined, String(latest.error));
    assert.equal(await rowsKept(db, names), {
      applied: ["node-1 gateway"],
      requests: ["node-1 org"],
      records: ["gone gateway", "gone top", "implicit gateway", "node-1 gateway"],
      implicitApplied: ["gateway"],
    });
  }));

test.run();
