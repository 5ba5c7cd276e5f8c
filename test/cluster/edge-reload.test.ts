// Kamailio's reload rate limit against a real Kamailio 5.6 on 127.0.0.10 (src/deploy/edge-reload.ts):
// the generated config allows one RPC reload per reload_delta (5 s) and module, and refuses a
// second with `500 ongoing reload` (permissions) or `500 Ongoing reload` (dispatcher). Two
// carrier changes within 5 s, then two node changes within 5 s, are each applied by one
// `pbxctl edge apply` (the built command's class, over a store of its own): the second of each
// pair is refused once, waited out and retried, and exits 0 with the edge holding what was
// compiled; no rerun. The real edge's refusal is recorded too, so the fault the code matches is
// the one Kamailio gives. This file's waits are Kamailio's own (real seconds): a real edge runs on
// the real clock.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import EdgeApply from "../../src/cli/commands/edge/apply.js";
import { EDGE_RELOAD_DELTA_S } from "../../src/compiler/edge/index.js";
import { EdgeRpcError } from "../../src/deploy/edge-apply.js";
import { isReloadRateLimited } from "../../src/deploy/edge-reload.js";
import { openDataStore } from "../../src/domain/config/gitops.js";
import { addEngineNode } from "../cli/engine-nodes.js";
import { runCommand } from "../cli/run-command.js";
import { EDGE_ADDRESS, missingTools, type RunningEdge, startEdge } from "./edge-harness.js";
import { SipUa } from "./sip-ua.js";

interface Context {
  edge: RunningEdge;
  dataDir: string;
}

const reloadSuite = suite<Context>("edge reload rate limit");
const missing = missingTools();

reloadSuite.before(async (context) => {
  context.dataDir = mkdtempSync(join(tmpdir(), "pbx-edge-reload-"));
  const store = await openDataStore(process.env, context.dataDir, { create: true });
  await store.db.destroy();
  // The edge starts with no node and one carrier: what `edge init` writes for an empty store.
  context.edge = await startEdge({ nodes: [], orgs: [], carriers: ["127.0.0.20"] }, 1);
});

reloadSuite.after(async (context) => {
  await context.edge?.stop();
  if (context.dataDir) rmSync(context.dataDir, { recursive: true, force: true });
});

const apply = (context: Context, carriers: string[]) =>
  runCommand(EdgeApply, [
    ...["--dir", context.edge.dataDir, "--rpc-port", String(context.edge.rpcPort)],
    ...["--data-dir", context.dataDir],
    ...carriers.flatMap((carrier) => ["--carrier", carrier]),
  ]);

/** What the edge answers a carrier-less INVITE from `address`: 404 once it is a carrier. */
async function inviteFrom(context: Context, address: string): Promise<string> {
  const ua = await SipUa.open(address, { address: EDGE_ADDRESS, port: context.edge.sipPort });
  try {
    const answer = await ua.request({
      method: "INVITE",
      uri: `sip:+918065978099@${EDGE_ADDRESS}:${context.edge.sipPort}`,
      fromUser: "carrier",
      toUser: "+918065978099",
    });
    return answer.start;
  } finally {
    await ua.close();
  }
}

reloadSuite(
  "two carrier changes within 5 s: one edge apply each, the second waits the limit out",
  async (context) => {
    assert.is(await inviteFrom(context, "127.0.0.21"), "SIP/2.0 403 Forbidden", "not a carrier");
    const first = await apply(context, ["127.0.0.20", "127.0.0.21"]);
    assert.is(first.code, 0, first.stderr + String(first.error));
    assert.match(first.stdout, "carriers reloaded");
    assert.not.match(first.stderr, "refused", "the first reload goes in at once");
    const started = Date.now();
    const second = await apply(context, ["127.0.0.20", "127.0.0.21", "127.0.0.22"]);
    const took = Date.now() - started;
    assert.is(second.code, 0, second.stderr + String(second.error));
    assert.match(
      second.stderr,
      `edge: permissions.addressReload refused: Kamailio allows one reload per ${EDGE_RELOAD_DELTA_S} s; retrying in`,
    );
    assert.match(second.stdout, "applied and read back");
    assert.match(second.stdout, "carriers reloaded");
    assert.ok(took >= 1000, `the apply waited (${took} ms)`);
    // The edge took both: each new carrier's call is a carrier's (an unknown number, 404).
    assert.is(await inviteFrom(context, "127.0.0.21"), "SIP/2.0 404 Unknown Number");
    assert.is(await inviteFrom(context, "127.0.0.22"), "SIP/2.0 404 Unknown Number");
  },
);

reloadSuite(
  "two node changes within 5 s: the dispatcher's refusal is waited out the same way",
  async (context) => {
    const carriers = ["127.0.0.20", "127.0.0.21", "127.0.0.22"];
    for (const [name, address] of [
      ["node-1", "127.0.0.11:5060"],
      ["node-2", "127.0.0.12:5060"],
    ] as const) {
      await addEngineNode(context.dataDir, name, address);
      const applied = await apply(context, carriers);
      assert.is(applied.code, 0, applied.stderr + String(applied.error));
      assert.match(applied.stdout, "nodes reloaded");
      if (name === "node-2") {
        assert.match(applied.stderr, "edge: dispatcher.reload refused");
      }
    }
    const list = (await context.edge.rpc("dispatcher.list")) as {
      RECORDS: Array<{ SET: { TARGETS: Array<{ DEST: { URI: string } }> } }>;
    };
    assert.equal(
      list.RECORDS.flatMap((record) => record.SET.TARGETS.map((t) => t.DEST.URI)).sort(),
      ["sip:127.0.0.11:5060", "sip:127.0.0.12:5060"],
    );
  },
);

reloadSuite("Kamailio refuses a second reload within reload_delta, as matched", async (context) => {
  // The last carrier reload was more than reload_delta ago (the node test waited one out).
  await context.edge.rpc("permissions.addressReload");
  let refusal: unknown = null;
  await context.edge.rpc("permissions.addressReload").catch((error) => {
    refusal = error;
  });
  assert.instance(refusal, EdgeRpcError);
  assert.equal((refusal as EdgeRpcError).fault, { code: 500, message: "ongoing reload" });
  assert.ok(isReloadRateLimited(refusal));
});

if (missing) {
  console.warn(`SKIPPED edge reload rate limit: ${missing}`);
} else {
  reloadSuite.run();
}
