// `org move` (issue 25, docs/nodes.md "Moving an org") in `serve`, with three fake AMI engines
// (recorded answers only): the move is deployed on the target and verified, the placement
// switched, the source waits while a call of the org is up on it (its config stays there), then
// the org is removed from the source; a save during the move reaches both sides; the drain's
// timeout is reported and the move goes on; a driver that stops mid-move (a lost lease) leaves
// the move to the next one, which resumes at the recorded phase. After the moves every node's
// tree holds only its own orgs. The refusals are SPEC §7-style errors.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { orgMoveEngines } from "../../src/api/org-move-engines.js";
import { OrgMoveDriver } from "../../src/domain/nodes/org-move-driver.js";
import { type FakeNodes, holds, startFakeNodes, until } from "./fake-nodes.js";

const T0 = Date.parse("2026-03-01T10:00:00.000Z");

interface Org {
  id: string;
  api_key: string;
  context_prefix: string;
}

/** A call of `org` up on a fake engine (its channel events), and its hang-up. */
function callOn(nodes: FakeNodes, n: number, org: Org, id: string) {
  const fields = {
    Channel: `PJSIP/${org.context_prefix}100-0000000${id.slice(-1)}`,
    Uniqueid: id,
    Linkedid: id,
    ChannelState: "6",
    ChannelStateDesc: "Up",
    CallerIDNum: "100",
    CallerIDName: "Ann",
    ConnectedLineNum: "101",
    AccountCode: org.id,
    Context: `${org.context_prefix}internal`,
    Exten: "101",
  };
  const engine = nodes.engines[n - 1]!;
  engine.emitEvent({ Event: "Newchannel", ...fields });
  return () => engine.emitEvent({ Event: "Hangup", Cause: "16", ...fields });
}

/** The org's live calls on node `n` as this replica follows them. */
function liveOn(nodes: FakeNodes, n: number, orgId: string): number {
  const node = nodes.runtime(`node-${n}`).node;
  return nodes.server.nodeCalls?.trackingOf(node.id)?.live.callsOf(orgId).length ?? -1;
}

/** Runs the move's waits (its fake timers) until its state satisfies `done`. */
async function driveUntil(
  nodes: FakeNodes,
  org: Org,
  // biome-ignore lint/suspicious/noExplicitAny: the move's JSON, inspected field by field
  done: (move: any) => boolean,
  what: string,
  // biome-ignore lint/suspicious/noExplicitAny: as above
): Promise<any> {
  for (let i = 0; i < 400; i++) {
    const move = await nodes.call("GET", `/admin/organizations/${org.id}/move`, nodes.admin);
    if (move.status === 200 && done(move.body)) return move.body;
    nodes.moveClock.advance(1000);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the move never reached: ${what}`);
}

async function seedOrgs(nodes: FakeNodes): Promise<Org[]> {
  const orgs: Org[] = [];
  for (const name of ["A", "B", "C"]) {
    const org = (await nodes.call("POST", "/organizations", nodes.admin, { name })).body as Org;
    const key = { "x-api-key": org.api_key };
    const user = await nodes.call("POST", "/users", key, { extension: "100", name: "Ann" });
    assert.is(user.status, 201, JSON.stringify(user.body));
    orgs.push(org);
  }
  await nodes.settle();
  for (const [n, org] of orgs.entries()) assert.ok(holds(nodes.dir(n + 1), org.id));
  // Each node's events connection is up (live calls are followed).
  await until(() => nodes.engines.every((e) => e.logins >= 2), "events connections");
  return orgs;
}

/** Every node's tree holds exactly the orgs listed for it. */
function assertTrees(nodes: FakeNodes, orgs: Org[], expected: Record<number, Org[]>): void {
  for (const [n, own] of Object.entries(expected)) {
    for (const org of orgs) {
      const should = own.includes(org);
      assert.is(
        holds(nodes.dir(Number(n)), org.id),
        should,
        `node-${n} ${should ? "holds" : "never holds"} ${org.id}`,
      );
    }
  }
}

test("a move: deployed on the target, switched, held back by a live call, then removed from the source", async () => {
  const nodes = await startFakeNodes(3);
  const { call, admin } = nodes;
  try {
    const orgs = await seedOrgs(nodes);
    const [a, b, c] = orgs as [Org, Org, Org];
    const keyA = { "x-api-key": a.api_key };

    // The refusals, each with its message; nothing is recorded.
    const refused = async (orgId: string, body: object, status: number, error: string) => {
      const res = await call("POST", `/admin/organizations/${orgId}/move`, admin, body);
      assert.is(res.status, status, JSON.stringify(res.body));
      assert.equal(res.body, { error });
    };
    await refused(a.id, { to: "node-9" }, 404, "Engine node not found");
    await refused(a.id, { to: "node-1" }, 409, "Organization is already on engine node 'node-1'");
    await refused(
      "00000000-0000-4000-8000-000000000000",
      { to: "node-2" },
      404,
      "Organization not found",
    );
    const n3 = nodes.runtime("node-3").node;
    assert.is(
      (await call("PUT", `/admin/engine-nodes/${n3.id}`, admin, { capacity: 1 })).status,
      200,
    );
    await refused(a.id, { to: "node-3" }, 409, "Engine node 'node-3' is full (1 organizations)");
    assert.is((await call("POST", `/admin/engine-nodes/${n3.id}/drain`, admin)).status, 200);
    await refused(
      a.id,
      { to: "node-3" },
      409,
      "Engine node 'node-3' is draining: it takes no new organization",
    );
    const badTimeout = await call("POST", `/admin/organizations/${a.id}/move`, admin, {
      to: "node-2",
      call_drain_timeout_seconds: 0,
    });
    assert.is(badTimeout.status, 400, JSON.stringify(badTimeout.body));
    const byOrg = await call("POST", `/admin/organizations/${a.id}/move`, keyA, { to: "node-2" });
    assert.is(byOrg.status, 403, "an org never moves itself");
    const never = await call("GET", `/admin/organizations/${b.id}/move`, admin);
    assert.is(never.status, 404);
    assert.equal(never.body, { error: "This organization has not been moved" });

    // A call of A is up on node-1 when the move is asked for.
    const hangUp = callOn(nodes, 1, a, "1800000001.1");
    await until(() => liveOn(nodes, 1, a.id) === 1, "A's call followed on node-1");
    const asked = await call("POST", `/admin/organizations/${a.id}/move`, admin, {
      to: "node-2",
      call_drain_timeout_seconds: 600,
    });
    assert.is(asked.status, 202, JSON.stringify(asked.body));
    assert.equal(
      [
        asked.body.phase,
        asked.body.from_node,
        asked.body.to_node,
        asked.body.call_drain_timeout_seconds,
      ],
      ["deploying", "node-1", "node-2", 600],
    );
    await refused(
      a.id,
      { to: "node-2" },
      409,
      "Organization is already being moved to engine node 'node-2'",
    );

    // Deployed on node-2 (verified), switched, no edge (nothing to notify): draining while the
    // call is up, A's config on both nodes meanwhile.
    const draining = await driveUntil(
      nodes,
      a,
      (m) => m.phase === "draining" && m.drain?.calls === 1,
      "draining with one call",
    );
    assert.is(
      draining.phones_notified,
      null,
      "no edge: phones learn the new address by re-provisioning",
    );
    assert.is(draining.drain.timed_out, false);
    assert.is(
      draining.drain.deadline,
      new Date(Date.parse(draining.drain.started_at) + 600_000).toISOString(),
    );
    const placement = await call("GET", `/admin/organizations/${a.id}/placement`, admin);
    assert.is(placement.body.placement.node, "node-2", "switched to the target");
    assert.ok(holds(nodes.dir(2), `[${a.context_prefix}100]`), "A's config on the target");
    assert.ok(
      holds(nodes.dir(1), `[${a.context_prefix}100]`),
      "and still on the source, for its call",
    );

    // A save during the move reaches both sides; node-3 never sees A.
    assert.is((await call("POST", "/users", keyA, { extension: "101", name: "Al" })).status, 201);
    await until(
      () => nodes.runtime("node-1").engine.deploys.scheduler.pendingOrgs.includes(a.id),
      "the save scheduled on the source",
    );
    await nodes.settle();
    assert.ok(holds(nodes.dir(1), `[${a.context_prefix}101]`));
    assert.ok(holds(nodes.dir(2), `[${a.context_prefix}101]`));

    // However long the call lasts (short of the timeout), A stays on the source.
    const held = await driveUntil(nodes, a, (m) => Date.parse(m.updated_at) >= 0, "a look");
    for (let i = 0; i < 20; i++) nodes.moveClock.advance(1000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const still = await call("GET", `/admin/organizations/${a.id}/move`, admin);
    assert.is(still.body.phase, "draining", JSON.stringify(still.body));
    assert.is(held.id, still.body.id);
    assert.ok(holds(nodes.dir(1), a.id), "the source keeps A while its call is up");

    // The call ends: A leaves node-1.
    hangUp();
    const done = await driveUntil(nodes, a, (m) => m.phase === "done", "done");
    assert.ok(done.finished_at, JSON.stringify(done));
    assert.is(done.drain.calls, 0);
    assert.is(done.drain.timed_out, false);
    assert.is(done.last_error, null);
    await nodes.settle();
    assertTrees(nodes, orgs, { 1: [], 2: [a, b], 3: [c] });

    // And back again (no call up): the latest move replaces the finished one.
    const back = await call("POST", `/admin/organizations/${a.id}/move`, admin, { to: "node-1" });
    assert.is(back.status, 202, JSON.stringify(back.body));
    assert.is.not(back.body.id, done.id);
    await driveUntil(nodes, a, (m) => m.phase === "done", "moved back");
    await nodes.settle();
    assertTrees(nodes, orgs, { 1: [a], 2: [b], 3: [c] });
  } finally {
    await nodes.close();
  }
});

test("a move resumes under the next driver, and a drain that times out goes on and says so", async () => {
  const nodes = await startFakeNodes(2);
  const { call, admin, server } = nodes;
  try {
    const a = (await call("POST", "/organizations", admin, { name: "A" })).body as Org;
    const b = (await call("POST", "/organizations", admin, { name: "B" })).body as Org;
    const key = { "x-api-key": a.api_key };
    assert.is((await call("POST", "/users", key, { extension: "100", name: "Ann" })).status, 201);
    await nodes.settle();
    await until(() => nodes.engines.every((e) => e.logins >= 2), "events connections");
    callOn(nodes, 1, a, "1800000002.2"); // never hung up
    await until(() => liveOn(nodes, 1, a.id) === 1, "A's call followed on node-1");
    const asked = await call("POST", `/admin/organizations/${a.id}/move`, admin, {
      to: "node-2",
      call_drain_timeout_seconds: 30,
    });
    assert.is(asked.status, 202, JSON.stringify(asked.body));
    const draining = await driveUntil(
      nodes,
      a,
      (m) => m.phase === "draining" && m.drain?.calls === 1,
      "draining",
    );

    // This replica's driver stops (its lease lost, or the replica died): the move stays where it
    // was; another driver, on the same store and engines, picks it up at that phase.
    await server.moves!.stop();
    nodes.moveClock.advance(5000);
    const paused = await call("GET", `/admin/organizations/${a.id}/move`, admin);
    assert.is(paused.body.phase, "draining");
    const next = new OrgMoveDriver({
      db: server.pbx.deps.db,
      clock: () => new Date(T0 + nodes.moveClock.now()),
      timers: nodes.moveClock,
      engines: orgMoveEngines(server.nodes!, server.nodeCalls!, false),
    });
    next.start();
    try {
      // The call never ends: at the deadline (30 s after the drain started, a time kept in the
      // store, not in the stopped driver) the move goes on and reports it.
      const done = await driveUntil(nodes, a, (m) => m.phase === "done", "done after the timeout");
      assert.is(done.id, draining.id, "the same move, resumed");
      assert.is(
        done.drain.started_at,
        draining.drain.started_at,
        "its deadline survived the handover",
      );
      assert.is(done.drain.timed_out, true);
      assert.is(done.drain.calls, 1, "the calls still up at the deadline");
      assert.ok(Date.parse(done.finished_at) >= Date.parse(done.drain.deadline));
    } finally {
      await next.stop();
    }
    await nodes.settle();
    assert.not.ok(holds(nodes.dir(1), a.id), "removed from the source");
    assert.ok(holds(nodes.dir(2), a.id));
    assert.ok(holds(nodes.dir(2), b.id));
  } finally {
    await nodes.close();
  }
});

test.run();
