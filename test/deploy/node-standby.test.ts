// Warm standby (issue 25, docs/nodes.md): an org with a standby node is deployed on its primary
// AND its standby (same files, same gateway routes, loaded by both engines), so when the primary
// dies the edge's fallback to the standby finds the org's config there (issue 26); a save reloads
// both and no other node; a standby cleared loses the org's files; a third node never holds
// anything of it. Three fake AMI engines (recorded answers only) behind one `serve`.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { holds, startFakeNodes, until } from "./fake-nodes.js";
import { tree } from "./helpers.js";

/** The text of a node's gateway files. */
function gatewayOf(dir: string): string {
  return [...tree(dir)]
    .filter(([path]) => path.startsWith("gateway"))
    .map(([, text]) => text)
    .join("\n");
}

test("an org with a standby is on its primary and its standby, and on no other node", async () => {
  const nodes = await startFakeNodes(3);
  const { call, admin, engines, dir } = nodes;
  try {
    const a = (await call("POST", "/organizations", admin, { name: "A" })).body; // node-1
    const b = (await call("POST", "/organizations", admin, { name: "B" })).body; // node-2
    const c = (await call("POST", "/organizations", admin, { name: "C" })).body; // node-3
    const keyA = { "x-api-key": a.api_key };
    assert.is((await call("POST", "/users", keyA, { extension: "100", name: "Ann" })).status, 201);
    const did = await call("POST", "/did-pool/admin", admin, { number: "+918065978001" });
    assert.is(did.status, 201, JSON.stringify(did.body));
    const asked = await call("POST", `/did-pool/${did.body.id}/request`, keyA);
    assert.is(asked.status, 201, JSON.stringify(asked.body));
    const approved = await call("POST", `/did-pool/admin/requests/${asked.body.id}/approve`, admin);
    assert.is(approved.status, 200, JSON.stringify(approved.body));
    await nodes.settle();
    assert.ok(holds(dir(1), `[${a.context_prefix}100]`), "A on its primary");
    assert.not.ok(holds(dir(2), a.id), "no standby yet: nothing of A on node-2");

    // node-2 becomes A's standby: at the next look node-2 deploys A (files, include line and
    // gateway route), its engine loads it; node-3 is left alone.
    const reloads3 = engines[2]!.reloadCommands().length;
    const pinned = await call("PUT", `/admin/organizations/${a.id}/placement`, admin, {
      node: "node-1",
      standby_node: "node-2",
    });
    assert.is(pinned.status, 200, JSON.stringify(pinned.body));
    const reloads2 = engines[1]!.reloadCommands().length;
    await nodes.settle();
    for (const n of [1, 2]) {
      assert.ok(holds(dir(n), `[${a.context_prefix}100]`), `A's config on node-${n}`);
      assert.match(gatewayOf(dir(n)), "918065978001", `A's DID dispatched on node-${n}`);
    }
    assert.ok(engines[1]!.reloadCommands().length > reloads2, "the standby's engine loaded A");
    assert.ok(holds(dir(2), b.id), "node-2 keeps its own org");

    // A save to A reloads its primary and its standby, never node-3; A's request is closed
    // once both deployed it.
    const before = engines.map((e) => e.reloadCommands().length);
    assert.is((await call("POST", "/users", keyA, { extension: "101", name: "Al" })).status, 201);
    await until(
      () =>
        ["node-1", "node-2"].every((name) =>
          nodes.runtime(name).engine.deploys.scheduler.pendingOrgs.includes(a.id),
        ),
      "A's save scheduled on both of its nodes",
    );
    assert.not.ok(nodes.runtime("node-3").engine.deploys.scheduler.pendingOrgs.includes(a.id));
    await nodes.settle();
    for (const n of [1, 2]) {
      assert.ok(holds(dir(n), `[${a.context_prefix}101]`), `A's save on node-${n}`);
      assert.ok(engines[n - 1]!.reloadCommands().length > before[n - 1]!, `node-${n} reloaded`);
    }
    assert.is(engines[2]!.reloadCommands().length, reloads3, "node-3 never reloaded for A");
    // Closed after both deploys (each node's deployer closes its part once its deploy is done).
    await until(
      async () => !(await nodes.server.deployRequests.requested(a.id)),
      "A's request closed on both nodes",
    );

    // Standby cleared: node-2 removes A (files and DID route) and keeps B; node-1 keeps A.
    const cleared = await call("PUT", `/admin/organizations/${a.id}/placement`, admin, {
      node: "node-1",
      standby_node: null,
    });
    assert.is(cleared.status, 200, JSON.stringify(cleared.body));
    await nodes.settle();
    assert.not.ok(holds(dir(2), a.id), "A's files gone from its former standby");
    assert.not.match(gatewayOf(dir(2)), "918065978001", "and its DID route");
    assert.ok(holds(dir(2), b.id));
    assert.ok(holds(dir(1), `[${a.context_prefix}101]`), "the primary keeps A");

    // Isolation: each tree holds only the orgs the node carries.
    for (const [n, own, others] of [
      [1, [a], [b, c]],
      [2, [b], [a, c]],
      [3, [c], [a, b]],
    ] as const) {
      for (const org of own) assert.ok(holds(dir(n), org.id), `node-${n} holds its org`);
      for (const org of others) assert.not.ok(holds(dir(n), org.id), `node-${n} holds no other`);
    }
  } finally {
    await nodes.close();
  }
});

test.run();
