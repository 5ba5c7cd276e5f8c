// Placement under concurrency (issue 25): orgs created at the same moment on several connections
// (several replicas, on PostgreSQL) never overfill a node, because every placement decision locks
// the node rows first; on SQLite the write transactions are serial anyway. Also the pure choice
// of the least-loaded node.
import { randomBytes } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Conflict } from "../../src/domain/errors.js";
import { createEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { leastLoadedNode, NO_NODE_WITH_ROOM } from "../../src/domain/nodes/placement.js";
import { createOrganizationRecord } from "../../src/domain/orgs/org-creation.js";
import type { EngineNodeRow } from "../../src/store/engine-node-repository.js";
import { nodeLoads } from "../../src/store/engine-node-repository.js";
import { freshStore } from "./helpers.js";

const serverKey = randomBytes(32);
const clock = () => new Date("2026-11-26T12:00:00.000Z");

function nodeInput(name: string, capacity: number) {
  return {
    name,
    ami_username: "pbxctl",
    ami_secret: "secret",
    sip_address: `${name}.example`,
    capacity,
  };
}

test("orgs created at once never overfill a node: exactly the capacity is placed", async () => {
  const store = await freshStore();
  try {
    const deps = { db: store.db, config: { serverKey }, clock };
    const one = await createEngineNode(deps, nodeInput("node-1", 3));
    const two = await createEngineNode(deps, nodeInput("node-2", 2));
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        createOrganizationRecord(
          store.db,
          { name: `Org ${i}`, slug: null, status: "active" },
          { serverKey, now: clock().toISOString() },
        ),
      ),
    );
    const created = attempts.filter((a) => a.status === "fulfilled");
    const refused = attempts.filter((a) => a.status === "rejected");
    assert.is(created.length, 5);
    for (const r of refused) {
      assert.instance(r.reason, Conflict);
      assert.is((r.reason as Error).message, NO_NODE_WITH_ROOM);
    }
    const loads = await nodeLoads(store.db);
    assert.is(loads.get(one.id)?.primaries, 3);
    assert.is(loads.get(two.id)?.primaries, 2);
    const orgs = await store.db.selectFrom("organizations").select("id").execute();
    assert.is(orgs.length, 5, "a refused org is rolled back with its placement");
  } finally {
    await store.close();
  }
});

function row(name: string, capacity: number, state: EngineNodeRow["state"] = "active") {
  return {
    id: name,
    name,
    ami_host: "127.0.0.1",
    ami_port: 5038,
    ami_username: "u",
    ami_secret_sealed: "v1.x",
    sip_address: name,
    capacity,
    state,
    created_at: "",
    updated_at: "",
  } satisfies EngineNodeRow;
}

test("least loaded: smallest share of capacity among active nodes with room", () => {
  const nodes = [row("a", 10), row("b", 2), row("c", 100, "draining"), row("d", 1, "down")];
  const loads = new Map([
    ["a", { primaries: 4, standbys: 0 }],
    ["b", { primaries: 1, standbys: 0 }],
  ]);
  assert.is(leastLoadedNode(nodes, loads)?.name, "a", "4/10 before 1/2; draining and down never");
  loads.set("a", { primaries: 10, standbys: 0 });
  assert.is(leastLoadedNode(nodes, loads)?.name, "b");
  loads.set("b", { primaries: 2, standbys: 0 });
  assert.is(leastLoadedNode(nodes, loads), undefined);
});

test.run();
