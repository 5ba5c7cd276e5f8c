// One `systemname` per engine node (issue 25, docs/nodes.md): at each node's AMI connect the
// server asks its Asterisk `CoreSettings` (answered as Asterisk 22 does, fixtures/ami/session.json)
// and records the systemname; a node with none among several, or sharing another node's, is
// reported with the fix (`GET /admin/engine-nodes`, `pbxctl nodes list`, `pbxctl status`) and
// its call events are not stored until it is fixed, since its call ids collide with another
// node's in the shared call store. Two fake AMI engines; the rule itself is pure.
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Status, { type StatusCommandResult } from "../../src/cli/commands/status.js";
import { systemNameProblems } from "../../src/domain/nodes/system-names.js";
import { runCommand } from "../cli/run-command.js";
import { type FakeNodes, startFakeNodes, until } from "./fake-nodes.js";

test("the rule: none is fine alone; none among several, or the same as another node's, is a problem", () => {
  const node = (id: string, systemName: string | null) => ({ id, name: id, systemName });
  assert.equal(systemNameProblems([node("n1", "")]).size, 0, "one node needs none");
  assert.equal(systemNameProblems([node("n1", "n1"), node("n2", "n2")]).size, 0);
  assert.equal(systemNameProblems([node("n1", "x"), node("n2", null)]).size, 0, "not reached yet");
  const none = systemNameProblems([node("n1", "n1"), node("n2", "")]);
  assert.equal([...none.keys()], ["n2"]);
  assert.match(none.get("n2")!, "Asterisk on engine node 'n2' has no systemname");
  assert.match(none.get("n2")!, "pbxctl engine init --system-name");
  const same = systemNameProblems([node("n1", "pbx"), node("n2", "pbx"), node("n3", "n3")]);
  assert.equal([...same.keys()].sort(), ["n1", "n2"]);
  assert.is(
    same.get("n2"),
    "Asterisk on engine node 'n2' has the systemname 'pbx' of engine node 'n1', so their call ids collide: set `systemname` in its asterisk.conf [options] (pbxctl engine init --system-name <name>) and restart it; its call events are not stored until then",
  );
});

/** A recorded Cdr of `orgId` with call id `id`. */
function cdrEvent(orgId: string, id: string): Record<string, string> {
  const fixture = JSON.parse(
    readFileSync(new URL("../../fixtures/calls/internal.json", import.meta.url), "utf8"),
  ) as { events: Record<string, string>[] };
  const recorded = fixture.events.find((e) => e.event === "Cdr" && e.accountcode !== "")!;
  const text = JSON.stringify(recorded).split("aaaaaaaa-0000-4000-8000-000000000001").join(orgId);
  return { ...(JSON.parse(text) as Record<string, string>), uniqueid: id, linkedid: id };
}

async function storedCalls(nodes: FakeNodes, orgId: string): Promise<string[]> {
  const rows = await nodes.server.pbx.deps.db
    .selectFrom("call_records")
    .select("uniqueid")
    .where("org_id", "=", orgId)
    .orderBy("uniqueid")
    .execute();
  return rows.map((r) => r.uniqueid);
}

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON, inspected field by field
async function nodeViews(nodes: FakeNodes): Promise<any[]> {
  const listed = await nodes.call("GET", "/admin/engine-nodes", nodes.admin);
  assert.is(listed.status, 200);
  return listed.body.data;
}

/** `pbxctl status --json` on the fake nodes' store. */
async function status(nodes: FakeNodes) {
  const saved = process.env.PBX_DATABASE_URL;
  if (nodes.storeUrl) process.env.PBX_DATABASE_URL = nodes.storeUrl;
  try {
    return await runCommand(Status, ["--data-dir", nodes.dataDir, "--json"]);
  } finally {
    if (saved === undefined) delete process.env.PBX_DATABASE_URL;
    else process.env.PBX_DATABASE_URL = saved;
  }
}

test("a node with another node's systemname is reported and its events are not stored until it is fixed", async () => {
  const nodes = await startFakeNodes(2);
  try {
    // The first org goes to node-1 (least loaded, then by name), the second to node-2.
    await nodes.call("POST", "/organizations", nodes.admin, { name: "A" });
    const onTwo = (await nodes.call("POST", "/organizations", nodes.admin, { name: "B" })).body as {
      id: string;
    };
    const two = nodes.engines[1]!;
    await until(async () => {
      const views = await nodeViews(nodes);
      return views.every((v) => v.system_name === v.name);
    }, "both systemnames read");
    assert.equal(
      (await nodeViews(nodes)).map((v) => [v.name, v.system_name, v.problem]),
      [
        ["node-1", "node-1", null],
        ["node-2", "node-2", null],
      ],
    );
    two.emitEvent(cdrEvent(onTwo.id, "node-2-1800000000.1"));
    await until(async () => (await storedCalls(nodes, onTwo.id)).length === 1, "stored");

    // node-2's Asterisk restarts with node-1's systemname.
    two.systemName = "node-1";
    const logins = two.logins;
    two.dropConnections();
    await until(async () => {
      const views = await nodeViews(nodes);
      return two.logins > logins && views.every((v) => v.problem !== null);
    }, "both nodes reported");
    const views = await nodeViews(nodes);
    assert.is(
      views[1].problem,
      "Asterisk on engine node 'node-2' has the systemname 'node-1' of engine node 'node-1', so their call ids collide: set `systemname` in its asterisk.conf [options] (pbxctl engine init --system-name <name>) and restart it; its call events are not stored until then",
    );
    const reported = await status(nodes);
    assert.is(reported.code, 5, "a failure of the install");
    assert.equal(
      (JSON.parse(reported.stdout) as StatusCommandResult).nodeProblems?.map((p) => p.node),
      ["node-1", "node-2"],
    );
    // Held: a call on node-2 is followed live but not stored.
    await until(
      () => nodes.server.nodeCalls!.problemOf(nodes.runtime("node-2").node.id) !== null,
      "held",
    );
    two.emitEvent(cdrEvent(onTwo.id, "node-1-1800000000.2"));
    await nodes.server.nodeCalls!.idle();
    assert.equal(await storedCalls(nodes, onTwo.id), ["node-2-1800000000.1"]);

    // Fixed and restarted: its events are stored again.
    two.systemName = "node-2";
    const again = two.logins;
    two.dropConnections();
    await until(async () => {
      const fixed = await nodeViews(nodes);
      return two.logins > again && fixed.every((v) => v.problem === null);
    }, "fixed");
    await until(
      () => nodes.server.nodeCalls!.problemOf(nodes.runtime("node-2").node.id) === null,
      "resumed",
    );
    two.emitEvent(cdrEvent(onTwo.id, "node-2-1800000000.3"));
    await until(async () => (await storedCalls(nodes, onTwo.id)).length === 2, "stored again");
    assert.equal(await storedCalls(nodes, onTwo.id), [
      "node-2-1800000000.1",
      "node-2-1800000000.3",
    ]);
    await nodes.settle();
    assert.is((await status(nodes)).code, 0);
  } finally {
    await nodes.close();
  }
});

test.run();
