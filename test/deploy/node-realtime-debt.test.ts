// Realtime PJSIP changes owed to an engine that no longer exists (issue 25, docs/nodes.md
// "Realtime PJSIP with several nodes"): a removed node's debt goes with it, and the one implicit
// engine's is taken over by the first node, which names that engine; each in the transaction
// that changes the nodes, so `pbxctl status` never lists them as owed for good. A failed write of
// the implicit engine is not in that debt (the rows are not written): the first node's start-up
// pass writes them. PostgreSQL only (`npm run test:pg`); SQLite keeps no realtime table.
import { randomBytes, randomUUID } from "node:crypto";
import { sql } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Status, { type StatusCommandResult } from "../../src/cli/commands/status.js";
import type { RealtimeRow } from "../../src/compiler/pjsip-realtime.js";
import { RealtimePjsip } from "../../src/deploy/realtime-pjsip.js";
import { ReloadQueue } from "../../src/deploy/reload-queue.js";
import { createEngineNode, deleteEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { pinOrg } from "../../src/domain/nodes/placement.js";
import { createOrganizationRecord } from "../../src/domain/orgs/org-creation.js";
import type { EngineProbe, EngineTarget } from "../../src/engine/target.js";
import { nodeRealtimeSchema } from "../../src/model/node-realtime.js";
import { type Db, openStore } from "../../src/store/database.js";
import { insertEngineNode, savePlacement } from "../../src/store/engine-node-repository.js";
import {
  createPjsipRealtimeRepository,
  handImplicitEngineDebtTo,
} from "../../src/store/pjsip-realtime-repository.js";
import { runCommand, withEnv } from "../cli/run-command.js";
import { engineNodeInput, freshStore, migratedTo } from "../store/helpers.js";
import { freshStoreLocation, testBackend } from "../store/test-database.js";
import { until } from "./fake-nodes.js";
import { tempDir } from "./helpers.js";

const serverKey = randomBytes(32);
const clock = () => new Date("2026-11-27T13:00:00.000Z");
const at = clock().toISOString();

/** A user's endpoint, auth and AOR rows under `prefix`, its password `password`. */
function userRows(prefix: string, ext: string, password: string): RealtimeRow[] {
  const id = `${prefix}${ext}`;
  return [
    { table: "ps_auths", id, columns: { id, auth_type: "userpass", username: id, password } },
    { table: "ps_aors", id, columns: { id, max_contacts: "1" } },
    { table: "ps_endpoints", id, columns: { id, auth: id, aors: id } },
  ];
}

async function createOrg(db: Db, name: string): Promise<{ id: string; context_prefix: string }> {
  await createOrganizationRecord(
    db,
    { name, slug: null, status: "active" },
    { serverKey, now: at },
  );
  return db
    .selectFrom("organizations")
    .select(["id", "context_prefix"])
    .where("name", "=", name)
    .executeTakeFirstOrThrow();
}

/** An engine that takes every expiry and serves exactly the endpoints its node's views show. */
function fakeEngine(db: Db, node: string) {
  const expired: string[] = [];
  const target: EngineTarget = {
    kind: "ami",
    reload: () => Promise.reject(new Error("no reload expected")),
    health: () => Promise.resolve({ status: "healthy", checkedAt: at }),
    close: () => Promise.resolve(),
    async expireCachedObject(cache, id) {
      expired.push(`${cache} ${id}`);
      return "expired";
    },
    async verify(probes: readonly EngineProbe[]) {
      const served = await createPjsipRealtimeRepository(db).existing(
        "ps_endpoints",
        probes.map((p) => p.name),
        node,
      );
      return probes.filter((p) => p.present !== served.has(p.name));
    },
  };
  return { target, expired };
}

/** A fresh PostgreSQL store, with its URL for `pbxctl status`. */
async function withStore(run: (db: Db, url: string) => Promise<void>): Promise<void> {
  const store = await freshStoreLocation("unused.db");
  if (store.location.kind !== "postgres") throw new Error("a PostgreSQL run only");
  const db = await openStore(store.location);
  try {
    await run(db, store.location.url);
  } finally {
    await db.destroy();
    await store.drop();
  }
}

/** `pbxctl status --json` over the store, in realtime mode. */
async function status(url: string): Promise<StatusCommandResult> {
  const dir = await tempDir();
  try {
    const env = { PBX_DATABASE_URL: url, PBX_PJSIP: "realtime" };
    const out = await withEnv(env, () => runCommand(Status, ["--data-dir", dir.dir, "--json"]));
    // Exit 3 (pending units: nothing was deployed here) prints the result rather than returning it.
    return JSON.parse(out.stdout) as StatusCommandResult;
  } finally {
    await dir.cleanup();
  }
}

if (testBackend() === "postgres") {
  test("a removed node's debt goes with it: nothing left, and `pbxctl status` owes nothing", () =>
    withStore(async (db, url) => {
      const deps = { db, config: { serverKey }, clock };
      await createEngineNode(deps, engineNodeInput("node-1"));
      const two = await createEngineNode(deps, engineNodeInput("node-2"));
      const a = await createOrg(db, "Org A");
      // A on node-1 with node-2 as its standby: a change is owed to both.
      await pinOrg(db, a.id, { node: "node-1", standby_node: "node-2" }, at);
      const rows = createPjsipRealtimeRepository(db);
      await rows.replaceOrgRows({
        orgId: a.id,
        prefix: a.context_prefix,
        rows: userRows(a.context_prefix, "101", "one"),
        at,
      });
      await rows.acknowledge(await rows.pending({ nodeId: (await nodeIdOf(db, "node-1"))! }));
      // node-2's engine never took it; the standby is cleared and the node removed.
      assert.is((await rows.pending({ nodeId: two.id })).length, 3);
      await pinOrg(db, a.id, { node: "node-1", standby_node: null }, at);
      await deleteEngineNode(deps, "node-2");

      assert.equal(await rows.pending(), [], "nothing owed to the removed node");
      const result = await status(url);
      assert.equal(result.pjsipPending ?? [], []);
    }));

  test("the first node takes over the implicit engine's debt; rows the implicit engine failed to write are written by the node's start-up pass", () =>
    withStore(async (db) => {
      const a = await createOrg(db, "Org A");
      const rows = createPjsipRealtimeRepository(db);
      const a101 = `${a.context_prefix}101`;
      // The implicit engine's deployer wrote A's rows, and its engine has not taken them yet.
      await rows.replaceOrgRows({
        orgId: a.id,
        prefix: a.context_prefix,
        rows: userRows(a.context_prefix, "101", "one"),
        at,
      });
      assert.equal(
        (await rows.pending()).map((p) => p.nodeId),
        ["", "", ""],
      );
      // Then a save's write failed (the store restarted): the table keeps the old password.
      const current = userRows(a.context_prefix, "101", "two");

      const node = await createEngineNode(
        { db, config: { serverKey }, clock },
        engineNodeInput("node-1"),
      );
      assert.equal(await rows.pending({ nodeId: "" }), [], "nothing left for the implicit engine");
      assert.equal(
        (await rows.pending()).map(
          (p) => `${p.nodeId === node.id ? "node-1" : p.nodeId} ${p.kind}`,
        ),
        ["node-1 auth", "node-1 aor", "node-1 endpoint"],
      );

      // The node's start-up pass: every org's rows compiled and written, then its engine told.
      const engine = fakeEngine(db, "node-1");
      const realtime = new RealtimePjsip({
        db,
        builds: {
          orgPjsipRows: async (orgId) =>
            orgId === a.id ? { prefix: a.context_prefix, rows: current } : null,
        },
        target: engine.target,
        reloads: new ReloadQueue(engine.target),
        node: { id: node.id, name: "node-1" },
        clock,
      });
      try {
        await realtime.syncEverything();
      } finally {
        await realtime.stop();
      }
      const seen = await sql<{ password: string }>`
        select password from ${sql.id(nodeRealtimeSchema("node-1"))}.ps_auths
        where id = ${a101}`.execute(db);
      assert.equal(
        seen.rows.map((r) => r.password),
        ["two"],
        "the node sees the rows as the org is now",
      );
      assert.equal(engine.expired.sort(), [
        `res_pjsip/aor ${a101}`,
        `res_pjsip/auth ${a101}`,
        `res_pjsip/endpoint ${a101}`,
      ]);
      assert.equal(await rows.pending(), [], "the node's engine took everything");
    }));

  test("a save racing the first node's creation: what it queues is the node's, never left to the implicit engine", () =>
    withStore(async (db) => {
      const a = await createOrg(db, "Org A");
      const rows = createPjsipRealtimeRepository(db);
      const nodeId = randomUUID();
      // The first node's creation, held open after its hand-over (as a slow commit would be).
      let commit!: () => void;
      const held = new Promise<void>((resolve) => {
        commit = resolve;
      });
      let handedOver!: () => void;
      const handOver = new Promise<void>((resolve) => {
        handedOver = resolve;
      });
      const creation = db.transaction().execute(async (trx) => {
        await insertEngineNode(trx, {
          id: nodeId,
          name: "node-1",
          ami_host: "127.0.0.1",
          ami_port: 5038,
          ami_username: "pbxctl",
          ami_secret_sealed: "sealed",
          sip_address: "node-1.example",
          capacity: 10,
          state: "active",
          created_at: at,
          updated_at: at,
        });
        await savePlacement(trx, {
          org_id: a.id,
          node_id: nodeId,
          standby_node_id: null,
          pinned: 0,
          placed_at: at,
        });
        await handImplicitEngineDebtTo(trx, nodeId);
        handedOver();
        await held;
      });
      await handOver;
      // A save now counts no node (the creation has not committed). It waits for the creation
      // to commit, or (before the lock) commits at once what it queued for the implicit engine.
      const save = rows.replaceOrgRows({
        orgId: a.id,
        prefix: a.context_prefix,
        rows: userRows(a.context_prefix, "101", "one"),
        at,
      });
      await Promise.race([
        save,
        until(() => waitingForLock(db), "the save waits for the creation"),
      ]);
      commit();
      await creation;
      await save;
      assert.equal(
        (await rows.pending()).map((p) => `${p.nodeId === nodeId ? "node-1" : p.nodeId} ${p.kind}`),
        ["node-1 auth", "node-1 aor", "node-1 endpoint"],
      );
    }));

  test("migration 3022 settles what an earlier version left: the implicit engine's objects to their org's node, a removed node's deleted", () =>
    withStore(async (db) => {
      const migrator = await migratedTo(db, "3021-node-system-names");
      const deps = { db, config: { serverKey }, clock };
      const rows = createPjsipRealtimeRepository(db);
      const a = await createOrg(db, "Org A");
      const owe = (nodeId: string, orgId: string, id: string) =>
        sql`insert into pjsip_realtime_pending (node_id, kind, id, org_id, seq, queued_at)
          values (${nodeId}, 'endpoint', ${id}, ${orgId}, nextval('pjsip_realtime_pending_seq'), ${at})`.execute(
          db,
        );
      // No node yet: the implicit engine's queue is live and stays.
      await owe("", a.id, `${a.context_prefix}101`);
      assert.equal(await migrator.migrateToLatest().then((r) => r.error), undefined);
      assert.equal(
        (await rows.pending()).map((p) => p.nodeId),
        [""],
      );
      await migrator.migrateTo("3021-node-system-names");

      // As an earlier version left it: a first node created (placing A) with the implicit
      // engine's debt kept, and a removed node's debt kept.
      const one = await createEngineNode(deps, engineNodeInput("node-1"));
      await owe("", a.id, `${a.context_prefix}102`);
      await owe("", randomUUID(), "org_gone_100");
      await owe(randomUUID(), a.id, `${a.context_prefix}103`);
      assert.equal(await migrator.migrateToLatest().then((r) => r.error), undefined);
      assert.equal(
        (await rows.pending()).map((p) => `${p.nodeId === one.id ? "node-1" : p.nodeId} ${p.id}`),
        [`node-1 ${a.context_prefix}101`, `node-1 ${a.context_prefix}102`],
      );
    }));
}

if (testBackend() === "sqlite") {
  test("SQLite keeps no realtime table: a first node is added and a node removed without one", async () => {
    const store = await freshStore();
    try {
      const deps = { db: store.db, config: { serverKey }, clock };
      await createEngineNode(deps, engineNodeInput("node-1"));
      await createEngineNode(deps, engineNodeInput("node-2"));
      await deleteEngineNode(deps, "node-2");
      const tables = await sql<{ name: string }>`
        select name from sqlite_master
        where type = 'table' and (name like 'pjsip%' or name like 'ps!_%' escape '!')`.execute(
        store.db,
      );
      assert.equal(tables.rows, []);
      assert.equal(
        (await store.db.selectFrom("engine_nodes").select("name").execute()).map((n) => n.name),
        ["node-1"],
      );
    } finally {
      await store.close();
    }
  });
}

/** Whether a session waits for an advisory lock. */
async function waitingForLock(db: Db): Promise<boolean> {
  const found = await sql<{ n: string }>`
    select count(*) as n from pg_locks where locktype = 'advisory' and not granted`.execute(db);
  return Number(found.rows[0]!.n) > 0;
}

async function nodeIdOf(db: Db, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("engine_nodes")
    .select("id")
    .where("name", "=", name)
    .executeTakeFirst();
  return row?.id;
}

test.run();
