// Realtime PJSIP with several engine nodes (issue 25, docs/nodes.md "Realtime PJSIP with several
// nodes"), in `serve` with two fake AMI engines that look endpoints up in their own node's views
// (PostgreSQL only: `npm run test:pg`). An org's endpoint is served by its node only; a change
// is expired in the cache of every node holding the org and no other; after `org move` the
// source's cache is expired for the org's objects (it would otherwise keep serving them) and the
// target serves them. `pbxctl status` names the node that owes each object not taken yet.
import { test } from "uvu";
import * as assert from "uvu/assert";
import Status, { type StatusCommandResult } from "../../src/cli/commands/status.js";
import { createAmiTarget } from "../../src/engine/ami-target.js";
import type { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { runCommand, withEnv } from "../cli/run-command.js";
import { testBackend } from "../store/test-database.js";
import { type FakeNodes, startFakeNodes, until } from "./fake-nodes.js";

interface Org {
  id: string;
  api_key: string;
  context_prefix: string;
}

/** The `Cache Object` of each cache expiry an engine received since `from`. */
function expiries(engine: FakeAmiServer, from = 0): string[] {
  return engine.received
    .slice(from)
    .filter((a) => a.action === "SorceryMemoryCacheExpireObject")
    .map((a) => `${a.fields.Cache} ${a.fields.Object}`)
    .sort();
}

/**
 * Whether node `n`'s engine serves endpoint `id`: `pjsip show endpoint <id>` over an AMI session
 * of its own (what a phone's lookup meets), which the fake answers from its memory cache, else
 * from its node's views.
 */
async function serves(nodes: FakeNodes, n: number, id: string): Promise<boolean> {
  const node = nodes.runtime(`node-${n}`).node;
  const target = createAmiTarget({
    host: "127.0.0.1",
    port: node.ami_port,
    username: "pbxctl",
    secret: "secret",
  });
  try {
    const wrong = await target.verify!([{ kind: "endpoint", name: id, present: true, path: "" }]);
    return wrong.length === 0;
  } finally {
    await target.close();
  }
}

if (testBackend() === "postgres") {
  test("each node serves its orgs' endpoints only; a change is expired where the org is; a move expires the source's cache", async () => {
    const nodes = await startFakeNodes(2, { realtime: true });
    const { call, admin } = nodes;
    try {
      const orgs: Org[] = [];
      for (const name of ["A", "B"]) {
        orgs.push((await call("POST", "/organizations", admin, { name })).body as Org);
      }
      const [a, b] = orgs as [Org, Org];
      const user = await call(
        "POST",
        "/users",
        { "x-api-key": a.api_key },
        {
          extension: "100",
          name: "Ann",
        },
      );
      assert.is(user.status, 201, JSON.stringify(user.body));
      const bUser = await call(
        "POST",
        "/users",
        { "x-api-key": b.api_key },
        {
          extension: "100",
          name: "Bob",
        },
      );
      assert.is(bUser.status, 201);
      await nodes.settle();
      const a100 = `${a.context_prefix}100`;
      const b100 = `${b.context_prefix}100`;
      const realtime = (n: number) => nodes.runtime(`node-${n}`).engine.realtime!;
      await until(
        async () =>
          (await realtime(1).pending()).length === 0 && (await realtime(2).pending()).length === 0,
        "both nodes took their changes",
      );
      assert.ok(await serves(nodes, 1, a100), "node-1 serves A's phone");
      assert.not.ok(await serves(nodes, 2, a100), "node-2 refuses A's phone");
      assert.ok(await serves(nodes, 2, b100), "node-2 serves B's phone");
      assert.not.ok(await serves(nodes, 1, b100), "node-1 refuses B's phone");

      // A password change of A's user: expired on node-1 only.
      const [one, two] = nodes.engines as [FakeAmiServer, FakeAmiServer];
      const marks = [one.received.length, two.received.length] as const;
      const changed = await call(
        "PUT",
        `/users/${user.body.id}`,
        { "x-api-key": a.api_key },
        { sip_password: "Another-Secret-42" },
      );
      assert.is(changed.status, 200, JSON.stringify(changed.body));
      await until(async () => expiries(one, marks[0]).length > 0, "node-1 told");
      await realtime(1).idle();
      assert.equal(expiries(one, marks[0]), [`res_pjsip/auth ${a100}`]);
      assert.equal(expiries(two, marks[1]), [], "node-2 never holds A: told nothing");

      // Move A to node-2: the target serves A, the source's cache is expired and refuses it.
      const before = one.received.length;
      const asked = await call("POST", `/admin/organizations/${a.id}/move`, admin, {
        to: "node-2",
      });
      assert.is(asked.status, 202, JSON.stringify(asked.body));
      for (let i = 0; i < 400; i++) {
        const move = await call("GET", `/admin/organizations/${a.id}/move`, admin);
        if (move.body?.phase === "done") break;
        nodes.moveClock.advance(1000);
        await nodes.settle();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await nodes.settle();
      await until(
        async () => expiries(one, before).includes(`res_pjsip/endpoint ${a100}`),
        "the source's cache expired for A",
      );
      await realtime(1).idle();
      assert.equal(expiries(one, before), [
        `res_pjsip/aor ${a100}`,
        `res_pjsip/auth ${a100}`,
        `res_pjsip/endpoint ${a100}`,
      ]);
      assert.equal(await realtime(1).pending(), [], "verified gone on the source");
      assert.not.ok(await serves(nodes, 1, a100), "node-1 refuses A's phone after the move");
      assert.ok(await serves(nodes, 2, a100), "node-2 serves A's phone after the move");
      assert.ok(await serves(nodes, 2, b100));
    } finally {
      await nodes.close();
    }
  });

  test("`pbxctl status` lists what each node owes under the node's name", async () => {
    const nodes = await startFakeNodes(2, { realtime: true });
    const { call, admin } = nodes;
    try {
      // A on node-1 with node-2 as its warm standby: both hold A, so both owe its changes.
      const a = (await call("POST", "/organizations", admin, { name: "A" })).body as Org;
      const placed = await call("PUT", `/admin/organizations/${a.id}/placement`, admin, {
        node: "node-1",
        standby_node: "node-2",
      });
      assert.is(placed.status, 200, JSON.stringify(placed.body));
      await nodes.settle();
      // Both engines down: the save's rows are written, and what each node owes stays queued.
      for (const engine of nodes.engines) await engine.close();
      const user = await call(
        "POST",
        "/users",
        { "x-api-key": a.api_key },
        { extension: "100", name: "Ann" },
      );
      assert.is(user.status, 201, JSON.stringify(user.body));
      const a100 = `${a.context_prefix}100`;
      const realtime = (n: number) => nodes.runtime(`node-${n}`).engine.realtime!;
      await until(
        async () =>
          (await realtime(1).pending()).length === 3 && (await realtime(2).pending()).length === 3,
        "the save queued for both nodes",
      );
      // GET /config/status: A is not live; its three objects are owed (by both nodes, which
      // the org is never told: no node is named).
      const status = await call("GET", "/config/status", { "x-api-key": a.api_key });
      assert.is(status.status, 200, JSON.stringify(status.body));
      assert.is(status.body.live, false);
      assert.equal(status.body.realtime_pending, { unwritten: 0, not_taken: 3 });
      assert.not.match(JSON.stringify(status.body), "node-");
      const env = { PBX_DATABASE_URL: nodes.storeUrl!, PBX_PJSIP: "realtime" };
      const text = await withEnv(env, () => runCommand(Status, ["--data-dir", nodes.dataDir]));
      assert.is(text.code, 3, text.stdout + text.stderr);
      // One heading per node, each followed by the objects that node owes (in queue order).
      const lines = text.stdout.split("\n");
      const from = lines.indexOf("PJSIP objects the engines have not taken yet (6):");
      assert.ok(from >= 0, text.stdout);
      for (const [i, n] of [1, 2].entries()) {
        const heading = from + 1 + i * 4;
        assert.is(lines[heading], `  node node-${n} (3):`, text.stdout);
        const owed = await realtime(n).pending();
        assert.equal(
          lines.slice(heading + 1, heading + 4),
          owed.map((o) => `    ${o.kind} ${a100} (saved ${o.queuedAt})`),
          text.stdout,
        );
      }

      const json = await withEnv(env, () =>
        runCommand(Status, ["--data-dir", nodes.dataDir, "--json"]),
      );
      assert.is(json.code, 3, json.stdout + json.stderr);
      // Exit 3 with --json: the result is printed, not returned.
      const pending = (JSON.parse(json.stdout) as StatusCommandResult).pjsipPending ?? [];
      assert.equal(pending.map((o) => `${o.node} ${o.kind} ${o.id}`).sort(), [
        `node-1 aor ${a100}`,
        `node-1 auth ${a100}`,
        `node-1 endpoint ${a100}`,
        `node-2 aor ${a100}`,
        `node-2 auth ${a100}`,
        `node-2 endpoint ${a100}`,
      ]);
    } finally {
      await nodes.close();
    }
  });
}

test.run();
