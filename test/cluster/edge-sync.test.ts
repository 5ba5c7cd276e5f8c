// The server's edge sync (src/deploy/edge-sync.ts) against a real Kamailio 5.6 on 127.0.0.10 with
// SIPp stand-ins for node 1 (127.0.0.11) and node 2 (127.0.0.12): the store's routing is pushed
// and read back, an org moved to node 2 (placement changed in the store) is pushed by the sync
// and the next carrier call to its number is answered by node 2, with no Kamailio restart. The
// fast suite's fake JSON-RPC edge (test/deploy/fake-edge.ts) is checked here too: given the same
// tables it must read back what the real edge reads back, and its core.shmmem has the real shape.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { applyEdgeTables, type EdgeRpc, httpEdgeRpc } from "../../src/deploy/edge-apply.js";
import {
  compileStoreEdgeTables,
  EdgeSync,
  edgeStatus,
  servedOrgStates,
} from "../../src/deploy/edge-sync.js";
import { createEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { pinOrg } from "../../src/domain/nodes/placement.js";
import { adminHeaders, orgKey } from "../api/dids-fixtures.js";
import { startTestApp, type TestApp } from "../api/helpers.js";
import { REAL_SHMMEM, startFakeEdge } from "../deploy/fake-edge.js";
import { FakeClock } from "../deploy/helpers.js";
import {
  EDGE_ADDRESS,
  missingTools,
  type RunningEdge,
  type StandInNode,
  startEdge,
  startStandInNode,
} from "./edge-harness.js";
import { header, SipUa } from "./sip-ua.js";

const DID = "+918065978001";

interface Context {
  app: TestApp;
  edge: RunningEdge;
  node1: StandInNode;
  node2: StandInNode;
  carrier: SipUa;
  sync: EdgeSync;
  timers: FakeClock;
  org: { id: string; api_key: string };
}

const syncSuite = suite<Context>("edge sync");
const missing = missingTools();

const settingsOf = (context: Context) => ({
  dir: context.edge.dataDir,
  rpcPort: 0, // unused: the sync is given the edge's RPC
  carriers: ["127.0.0.20"],
});

syncSuite.before(async (context) => {
  context.node1 = await startStandInNode("node-1", "127.0.0.11");
  context.node2 = await startStandInNode("node-2", "127.0.0.12");
  // The edge starts knowing the nodes and nothing else: the sync brings it the store's routing.
  context.edge = await startEdge(
    {
      nodes: [
        {
          name: "node-1",
          sip_address: `${context.node1.address}:${context.node1.port}`,
          state: "active",
        },
      ],
      orgs: [],
      carriers: [],
    },
    1,
  );
  context.carrier = await SipUa.open("127.0.0.20", {
    address: EDGE_ADDRESS,
    port: context.edge.sipPort,
  });
  context.app = await startTestApp();
  const deps = { db: context.app.db, config: context.app.config, clock: () => new Date() };
  const node = { ami_username: "pbxctl", ami_secret: "secret", capacity: 10 };
  await createEngineNode(deps, {
    ...node,
    name: "node-1",
    sip_address: `${context.node1.address}:${context.node1.port}`,
  });
  await createEngineNode(deps, {
    ...node,
    name: "node-2",
    sip_address: `${context.node2.address}:${context.node2.port}`,
  });
  context.org = await context.app.createOrg("A"); // node-1: the least loaded, first by name
  // A pool number assigned to the org (the edge routes pool numbers only, as the gateway does):
  // added by the admin, requested by the org, approved.
  const admin = await adminHeaders(context.app);
  const pooled = await context.app.request("POST", "/api/v1/did-pool/admin", {
    headers: admin,
    body: { number: DID },
  });
  assert.is(pooled.status, 201, pooled.text);
  const asked = await context.app.request("POST", `/api/v1/did-pool/${pooled.body.id}/request`, {
    headers: orgKey(context.org as never),
  });
  assert.is(asked.status, 201, asked.text);
  const approved = await context.app.request(
    "POST",
    `/api/v1/did-pool/admin/requests/${asked.body.id}/approve`,
    { headers: admin },
  );
  assert.is(approved.status, 200, approved.text);
  context.timers = new FakeClock();
  context.sync = new EdgeSync({
    db: context.app.db,
    edge: settingsOf(context),
    rpc: context.edge.rpc,
    timers: context.timers,
  });
});

syncSuite.after(async (context) => {
  await context.sync?.stop();
  await context.carrier?.close();
  await context.app?.close();
  await context.edge?.stop();
  await context.node1?.kill();
  await context.node2?.kill();
});

const call = (context: Context) =>
  context.carrier.call({
    uri: `sip:${DID}@${EDGE_ADDRESS}:${context.edge.sipPort}`,
    fromUser: "carrier",
    toUser: DID,
  });

syncSuite(
  "taking the role pushes the store's routing, read back from Kamailio",
  async (context) => {
    context.sync.start();
    context.timers.advance(0);
    await context.sync.idle();
    assert.is(context.sync.outcome?.ok, true, context.sync.outcome?.error ?? "");
    const status = await edgeStatus(context.app.db, settingsOf(context));
    assert.is(status.state, "OK", JSON.stringify(status));
    const answered = await call(context);
    assert.is(header(answered.answer, "x-node"), "node-1");
  },
);

syncSuite("an org moved to node 2 is pushed; its next call is answered there", async (context) => {
  await pinOrg(context.app.db, context.org.id, { node: "node-2" }, new Date().toISOString());
  await context.sync.poll();
  context.timers.advance(800);
  await context.sync.idle();
  assert.is(context.sync.outcome?.ok, true, context.sync.outcome?.error ?? "");
  const answered = await call(context);
  assert.is(header(answered.answer, "x-node"), "node-2");
  assert.is(answered.bye.status, 200);
});

syncSuite("the fast suite's fake edge reads back what Kamailio reads back", async (context) => {
  const { tables } = await compileStoreEdgeTables(
    context.app.db,
    settingsOf(context),
    (await servedOrgStates(context.app.db)).values(),
  );
  const fake = await startFakeEdge(context.edge.dataDir);
  try {
    const fakeRpc = httpEdgeRpc(`http://127.0.0.1:${fake.port}/RPC`);
    // The fake starts empty: the same apply brings it to the tables Kamailio holds.
    await applyEdgeTables(fakeRpc, context.edge.dataDir, tables);
    assert.equal(await readBack(fakeRpc), await readBack(context.edge.rpc));
  } finally {
    await fake.close();
  }
});

syncSuite(
  "the edge's shared memory: core.shmmem answers the pool edge init's -m sets, in the fake's shape",
  async (context) => {
    const real = (await context.edge.rpc("core.shmmem")) as Record<string, number>;
    assert.equal(Object.keys(real).sort(), Object.keys(REAL_SHMMEM).sort(), JSON.stringify(real));
    // -m 256: the pool less what the allocator (tlsf) keeps for itself.
    const pool = 256 * 1024 * 1024;
    assert.ok(real.total! > pool - 1024 * 1024 && real.total! <= pool, JSON.stringify(real));
    assert.ok(real.free! > 0 && real.free! < real.total!, JSON.stringify(real));
    const figures = await context.sync.sharedMemory();
    assert.is(figures?.total, real.total);
    assert.ok(figures!.maxUsed > 0 && figures!.maxUsed <= figures!.total, JSON.stringify(figures));
  },
);

/** What edge-apply reads, in the fields it reads, order-free. */
async function readBack(rpc: EdgeRpc): Promise<unknown> {
  const htable = async (name: string) =>
    (
      (await rpc("htable.dump", [name])) as Array<{
        slot?: Array<{ name: string; value: unknown }>;
      }>
    )
      .flatMap((bucket) => bucket.slot ?? [])
      .map((slot) => `${slot.name}=${String(slot.value)}`)
      .sort();
  const dispatcher = (
    (await rpc("dispatcher.list")) as {
      RECORDS: Array<{
        SET: { ID: number; TARGETS: Array<{ DEST: { URI: string; ATTRS?: { BODY?: string } } }> };
      }>;
    }
  ).RECORDS.flatMap((record) =>
    record.SET.TARGETS.map((t) => `${record.SET.ID} ${t.DEST.URI} ${t.DEST.ATTRS?.BODY}`),
  ).sort();
  type Item = { item: { ip: string; mask?: number } };
  const exact = ((await rpc("permissions.addressDump")) as Item[]).map((i) => i.item.ip).sort();
  const ranges = ((await rpc("permissions.subnetDump")) as Item[] | null) ?? [];
  return {
    orgs: await htable("orgs"),
    dids: await htable("dids"),
    dispatcher,
    exact,
    ranges: ranges.map((i) => `${i.item.ip}/${i.item.mask}`).sort(),
  };
}

if (missing) {
  console.warn(`SKIPPED edge sync: ${missing}`);
} else {
  syncSuite.run();
}
