// Placement under concurrency (issue 25): orgs created at the same moment on several connections
// (several replicas, on PostgreSQL) never overfill a node, because every placement decision locks
// the node rows first; on SQLite the write transactions are serial anyway. A move under way takes
// a place on the node it is going to (then on the one it leaves, until done), so a move racing a
// placement, a pin or a lower capacity never over-fills a node either. Also the pure choice of
// the least-loaded node.
import { randomBytes } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Conflict } from "../../src/domain/errors.js";
import {
  createEngineNode,
  deleteEngineNode,
  updateEngineNode,
} from "../../src/domain/nodes/engine-nodes.js";
import { moveOrg } from "../../src/domain/nodes/org-moves.js";
import {
  leastLoadedNode,
  NO_NODE_WITH_ROOM,
  occupied,
  pinOrg,
} from "../../src/domain/nodes/placement.js";
import { createOrganizationRecord } from "../../src/domain/orgs/org-creation.js";
import type { EngineNodeRecord } from "../../src/model/stored-records.js";
import { nodeLoads } from "../../src/store/engine-node-repository.js";
import { engineNodeInput, freshStore } from "./helpers.js";

const serverKey = randomBytes(32);
const clock = () => new Date("2026-11-26T12:00:00.000Z");

test("orgs created at once never overfill a node: exactly the capacity is placed", async () => {
  const store = await freshStore();
  try {
    const deps = { db: store.db, config: { serverKey }, clock };
    const one = await createEngineNode(deps, engineNodeInput("node-1", 3));
    const two = await createEngineNode(deps, engineNodeInput("node-2", 2));
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

function row(name: string, capacity: number, state: EngineNodeRecord["state"] = "active") {
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
  } satisfies EngineNodeRecord;
}

test("least loaded: smallest share of capacity among active nodes with room", () => {
  const nodes = [row("a", 10), row("b", 2), row("c", 100, "draining"), row("d", 1, "down")];
  const loads = new Map([
    ["a", { primaries: 4, standbys: 0, moving: 0 }],
    ["b", { primaries: 1, standbys: 0, moving: 0 }],
  ]);
  assert.is(leastLoadedNode(nodes, loads)?.name, "a", "4/10 before 1/2; draining and down never");
  loads.set("a", { primaries: 10, standbys: 0, moving: 0 });
  assert.is(leastLoadedNode(nodes, loads)?.name, "b");
  loads.set("b", { primaries: 1, standbys: 0, moving: 1 });
  assert.is(leastLoadedNode(nodes, loads), undefined, "an org on its way to b takes its room");
});

/**
 * Two orgs on node-1 (capacity 5), one on node-2 (capacity 2), node-1 draining (the usual reason
 * to move orgs away): node-2 has room for exactly one more org.
 */
async function oneRoomLeft() {
  const store = await freshStore();
  const deps = { db: store.db, config: { serverKey }, clock };
  const create = (name: string) =>
    createOrganizationRecord(
      store.db,
      { name, slug: null, status: "active" },
      { serverKey, now: clock().toISOString() },
    );
  const one = await createEngineNode(deps, engineNodeInput("node-1", 5));
  const x = await create("X");
  const y = await create("Y");
  const two = await createEngineNode(deps, engineNodeInput("node-2", 2));
  await create("Z");
  await updateEngineNode(deps, "node-1", { state: "draining" });
  assert.is(occupied((await nodeLoads(store.db)).get(two.id)), 1);
  return { store, deps, one, two, x: x.row.id, y: y.row.id, create };
}

/** Runs both at once: exactly one succeeds, the other is a 409; node-2 ends at its capacity. */
async function race(
  setup: Awaited<ReturnType<typeof oneRoomLeft>>,
  operations: [() => Promise<unknown>, () => Promise<unknown>],
  refusals: string[],
) {
  const outcomes = await Promise.allSettled(operations.map((operation) => operation()));
  const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
  assert.is(refused.length, 1, `one of the two is refused: ${JSON.stringify(outcomes)}`);
  assert.instance(refused[0]!.reason, Conflict);
  assert.ok(refusals.includes((refused[0]!.reason as Error).message), refused[0]!.reason.message);
  const load = (await nodeLoads(setup.store.db)).get(setup.two.id);
  assert.ok(occupied(load) <= 2, `node-2 holds ${JSON.stringify(load)} for a capacity of 2`);
}

const FULL = "Engine node 'node-2' is full (2 organizations)";

test("a move racing a new org's placement: one of them takes node-2's last room", async () => {
  const setup = await oneRoomLeft();
  try {
    await race(
      setup,
      [() => moveOrg(setup.deps, setup.x, { to: "node-2" }), () => setup.create("W")],
      [FULL, NO_NODE_WITH_ROOM],
    );
  } finally {
    await setup.store.close();
  }
});

test("a move racing a pin to the same node: one of them takes node-2's last room", async () => {
  const setup = await oneRoomLeft();
  try {
    await race(
      setup,
      [
        () => moveOrg(setup.deps, setup.x, { to: "node-2" }),
        () => pinOrg(setup.store.db, setup.y, { node: "node-2" }, clock().toISOString()),
      ],
      [FULL],
    );
  } finally {
    await setup.store.close();
  }
});

test("a move racing a lower capacity: node-2 never ends with more orgs than its capacity", async () => {
  const setup = await oneRoomLeft();
  try {
    await race(
      setup,
      [
        () => moveOrg(setup.deps, setup.x, { to: "node-2" }),
        () => updateEngineNode(setup.deps, "node-2", { capacity: 1 }),
      ],
      [
        "Engine node 'node-2' is full (1 organizations)",
        "Engine node 'node-2' holds 2 organizations: its capacity cannot be below that",
      ],
    );
  } finally {
    await setup.store.close();
  }
});

test("a move takes one place on the node that holds the org besides its primary, never two", async () => {
  const setup = await oneRoomLeft();
  try {
    await moveOrg(setup.deps, setup.x, { to: "node-2" });
    const before = await nodeLoads(setup.store.db);
    assert.equal(before.get(setup.two.id), { primaries: 1, standbys: 0, moving: 1 });
    assert.equal(before.get(setup.one.id), { primaries: 2, standbys: 0, moving: 0 });
    // The move's switch: the target is the primary now; the source keeps the org while it drains.
    await setup.store.db
      .updateTable("org_placements")
      .set({ node_id: setup.two.id })
      .where("org_id", "=", setup.x)
      .execute();
    const switched = await nodeLoads(setup.store.db);
    assert.equal(switched.get(setup.two.id), { primaries: 2, standbys: 0, moving: 0 });
    assert.equal(switched.get(setup.one.id), { primaries: 1, standbys: 0, moving: 1 });
    // Done: nothing moving any more.
    await setup.store.db
      .updateTable("org_moves")
      .set({ phase: "done", finished_at: clock().toISOString() })
      .execute();
    const done = await nodeLoads(setup.store.db);
    assert.is(done.get(setup.one.id)?.moving, 0);
    assert.is(done.get(setup.two.id)?.moving, 0);
  } finally {
    await setup.store.close();
  }
});

const movingMessage = (move: { id: string; phase: string }) =>
  `Organization is being moved to engine node 'node-2' (move ${move.id}, phase ${move.phase}): wait until the move is done, then pin it`;

test("a pin of an org whose move is under way is refused, naming the move; another org's is not", async () => {
  const setup = await oneRoomLeft();
  try {
    await createEngineNode(setup.deps, engineNodeInput("node-3", 2));
    const move = await moveOrg(setup.deps, setup.x, { to: "node-2" });
    for (const input of [
      { node: "node-3" },
      { node: "node-1" },
      { node: "node-1", standby_node: "node-3" },
    ]) {
      const refused = await pinOrg(setup.store.db, setup.x, input, clock().toISOString()).then(
        () => null,
        (error: Error) => error,
      );
      assert.instance(refused, Conflict);
      assert.is(refused?.message, movingMessage(move));
    }
    // After the switch (the target is the primary now) a pin would send the org back.
    await setup.store.db
      .updateTable("org_moves")
      .set({ phase: "draining" })
      .where("org_id", "=", setup.x)
      .execute();
    const back = await pinOrg(
      setup.store.db,
      setup.x,
      { node: "node-1" },
      clock().toISOString(),
    ).then(
      () => null,
      (error: Error) => error,
    );
    assert.is(back?.message, movingMessage({ id: move.id, phase: "draining" }));
    const y = await pinOrg(setup.store.db, setup.y, { node: "node-3" }, clock().toISOString());
    assert.is(y.node, "node-3", "an org that is not moving is pinned as before");
    await setup.store.db
      .updateTable("org_moves")
      .set({ phase: "done", finished_at: clock().toISOString() })
      .execute();
    const x = await pinOrg(setup.store.db, setup.x, { node: "node-3" }, clock().toISOString());
    assert.is(x.node, "node-3", "pinned once the move is done");
  } finally {
    await setup.store.close();
  }
});

test("a pin racing a move of the same org: the pin is refused, or it came first and the move leaves from it", async () => {
  for (let round = 0; round < 4; round++) {
    const setup = await oneRoomLeft();
    try {
      const three = await createEngineNode(setup.deps, engineNodeInput("node-3", 2));
      const [move, pin] = await Promise.allSettled([
        moveOrg(setup.deps, setup.x, { to: "node-2" }),
        pinOrg(setup.store.db, setup.x, { node: "node-3" }, clock().toISOString()),
      ]);
      assert.is(move.status, "fulfilled", JSON.stringify(move));
      const recorded = await setup.store.db
        .selectFrom("org_moves")
        .selectAll()
        .where("org_id", "=", setup.x)
        .executeTakeFirstOrThrow();
      if (pin.status === "rejected") {
        assert.is((pin.reason as Error).message, movingMessage(recorded));
        assert.is(recorded.source_node_id, setup.one.id);
      } else {
        // The pin came first: the move leaves from where the pin put the org, never from a node
        // the org has already left.
        assert.is(recorded.source_node_id, three.id);
      }
    } finally {
      await setup.store.close();
    }
  }
});

test("a node that is a side of an unfinished move cannot be removed", async () => {
  const setup = await oneRoomLeft();
  try {
    const empty = await createEngineNode(setup.deps, engineNodeInput("node-3", 2));
    await moveOrg(setup.deps, setup.x, { to: "node-3" });
    const refused = await deleteEngineNode(setup.deps, "node-3").then(
      () => null,
      (error: Error) => error,
    );
    assert.instance(refused, Conflict);
    assert.is(
      refused?.message,
      "Engine node 'node-3' still holds 1 organizations being moved: wait until their moves are done",
    );
    assert.ok(empty.id);
  } finally {
    await setup.store.close();
  }
});

test.run();
