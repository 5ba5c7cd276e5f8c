// The compiled edge routing in a real Kamailio 5.6 (issue 26): Kamailio on 127.0.0.10 with the
// generated config, SIPp stand-ins for engine node 1 (127.0.0.11) and node 2 (127.0.0.12). Org A
// lives on node 1 with node 2 as its standby, org B on node 2. Phones send from 127.0.0.1, the
// known carrier from 127.0.0.20, an unknown one from 127.0.0.21. Real Asterisk nodes behind the
// edge come with issue 25's per-node deploys.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildEdgeTables, type EdgeState } from "../../src/compiler/edge/index.js";
import { applyEdgeTables, verifyEdge } from "../../src/deploy/edge-apply.js";
import { didAliases } from "../../src/model/phone.js";
import {
  EDGE_ADDRESS,
  missingTools,
  type RunningEdge,
  type StandInNode,
  startEdge,
  startStandInNode,
  waitForNodeState,
} from "./edge-harness.js";
import { header, SipUa } from "./sip-ua.js";

const A = "org_aaaaaaaa-0000-4000-8000-000000000001_";
const B = "org_bbbbbbbb-0000-4000-8000-000000000002_";
const DID_A = "+918065978001";
const DID_B = "+918065978011";
const PROBE_SECONDS = 1;

interface Context {
  edge: RunningEdge;
  node1: StandInNode;
  node2: StandInNode;
  state: Omit<EdgeState, "listen">;
  phone: SipUa;
  carrier: SipUa;
  stranger: SipUa;
}

const edgeSuite = suite<Context>("edge routing");
const missing = missingTools();

function edgeStateFor(
  node1: StandInNode,
  node2: StandInNode,
  didsOfA: string[],
  didsOfB: string[],
): Omit<EdgeState, "listen"> {
  return {
    nodes: [
      { name: "node-1", sip_address: `${node1.address}:${node1.port}`, state: "active" },
      { name: "node-2", sip_address: `${node2.address}:${node2.port}`, state: "active" },
    ],
    orgs: [
      {
        org_id: "a",
        context_prefix: A,
        primary: "node-1",
        standby: "node-2",
        dids: didsOfA.flatMap(didAliases),
      },
      {
        org_id: "b",
        context_prefix: B,
        primary: "node-2",
        standby: null,
        dids: didsOfB.flatMap(didAliases),
      },
    ],
    carriers: ["127.0.0.20"],
  };
}

edgeSuite.before(async (context) => {
  context.node1 = await startStandInNode("node-1", "127.0.0.11");
  context.node2 = await startStandInNode("node-2", "127.0.0.12");
  context.state = edgeStateFor(context.node1, context.node2, [DID_A], [DID_B]);
  context.edge = await startEdge(context.state, PROBE_SECONDS);
  const target = { address: EDGE_ADDRESS, port: context.edge.sipPort };
  context.phone = await SipUa.open("127.0.0.1", target);
  context.carrier = await SipUa.open("127.0.0.20", target);
  context.stranger = await SipUa.open("127.0.0.21", target);
});

edgeSuite.after(async (context) => {
  await Promise.all([context.phone?.close(), context.carrier?.close(), context.stranger?.close()]);
  await context.edge?.stop();
  await context.node1?.kill();
  await context.node2?.kill();
});

const uri = (context: Context, user?: string) =>
  `sip:${user ? `${user}@` : ""}${EDGE_ADDRESS}:${context.edge.sipPort}`;

edgeSuite("a REGISTER reaches its org's node with Path and Supported: path", async (context) => {
  const a = await context.phone.request({
    method: "REGISTER",
    uri: uri(context),
    fromUser: `${A}101`,
    toUser: `${A}101`,
    extra: ["Expires: 60"],
  });
  assert.is(a.status, 200, a.raw);
  assert.is(header(a, "x-node"), "node-1");
  // The stand-in echoes what it received: the edge's Path (with where the phone really is) and
  // the Supported: path Asterisk needs to accept it.
  assert.match(
    header(a, "path") ?? "",
    `<sip:${EDGE_ADDRESS}:${context.edge.sipPort};lr;received=sip:127.0.0.1:${context.phone.port}>`,
  );
  assert.match(header(a, "supported") ?? "", "path");
  // An expiry within the edge's (300 s by default) is left as asked.
  assert.is(header(a, "expires"), "60");

  const b = await context.phone.request({
    method: "REGISTER",
    uri: uri(context),
    fromUser: `${B}201`,
    toUser: `${B}201`,
  });
  assert.is(b.status, 200, b.raw);
  assert.is(header(b, "x-node"), "node-2");
  // No expiry asked (the node would grant its default, an hour): the edge asks for its own.
  assert.is(header(b, "expires"), "300");
});

edgeSuite(
  "a REGISTER's expiry is capped at the edge's, an unregistration left alone",
  async (context) => {
    const register = (extra: string[]) =>
      context.phone.request({
        method: "REGISTER",
        uri: uri(context),
        fromUser: `${A}101`,
        toUser: `${A}101`,
        extra,
      });
    const long = await register(["Expires: 3600"]);
    assert.is(long.status, 200, long.raw);
    assert.is(header(long, "expires"), "300");
    const unregistered = await register(["Expires: 0"]);
    assert.is(header(unregistered, "expires"), "0", "an unregistration stays one");
    // The Contact's own expires parameter overrides the header at a registrar: capped too.
    const contactParam = await context.phone.request({
      method: "REGISTER",
      uri: uri(context),
      fromUser: `${A}101`,
      toUser: `${A}101`,
      contactParams: ";expires=3600",
    });
    assert.match(header(contactParam, "contact") ?? "", /;expires=300$/);
  },
);

edgeSuite("a node's request to a phone follows the Path back through the edge", async (context) => {
  const registered = await context.phone.request({
    method: "REGISTER",
    uri: uri(context),
    fromUser: `${A}102`,
    toUser: `${A}102`,
  });
  const path = header(registered, "path") ?? "";
  // The node (a socket on node 1's address) calls the phone with the Path as its Route.
  const node = await SipUa.open("127.0.0.11", {
    address: EDGE_ADDRESS,
    port: context.edge.sipPort,
  });
  try {
    const answer = await node.request({
      method: "INVITE",
      uri: `sip:${A}102@127.0.0.1:${context.phone.port}`,
      fromUser: "node",
      toUser: `${A}102`,
      routes: [path],
    });
    assert.is(answer.status, 486, "the phone's own answer comes back through the edge");
    const invite = context.phone.received.find((message) => message.start.startsWith("INVITE"));
    assert.ok(invite, "the phone received the node's INVITE");
    assert.match(header(invite, "via") ?? "", EDGE_ADDRESS);
    assert.match(header(invite, "record-route") ?? "", EDGE_ADDRESS);
  } finally {
    await node.close();
  }
});

edgeSuite(
  "a phone's INVITE goes to its org's node; in-dialog requests are loose-routed",
  async (context) => {
    const a = await context.phone.call({
      uri: uri(context, "102"),
      fromUser: `${A}101`,
      toUser: "102",
    });
    assert.is(header(a.answer, "x-node"), "node-1");
    assert.match(header(a.answer, "record-route") ?? "", EDGE_ADDRESS);
    assert.is(a.bye.status, 200, "the BYE went along the Record-Route to node 1");
    assert.is(header(a.bye, "x-node"), "node-1");

    const b = await context.phone.call({
      uri: uri(context, "202"),
      fromUser: `${B}201`,
      toUser: "202",
    });
    assert.is(header(b.answer, "x-node"), "node-2");
    assert.is(b.bye.status, 200);
  },
);

edgeSuite(
  "a known carrier's INVITE goes to the DID's org; an unknown source is refused",
  async (context) => {
    const known = await context.carrier.call({
      uri: uri(context, DID_B),
      fromUser: "carrier",
      toUser: DID_B,
    });
    assert.is(header(known.answer, "x-node"), "node-2");
    // Under another alias of the same number (national form).
    const national = await context.carrier.call({
      uri: uri(context, "08065978001"),
      fromUser: "carrier",
      toUser: "08065978001",
    });
    assert.is(header(national.answer, "x-node"), "node-1");

    const unknown = await context.stranger.request({
      method: "INVITE",
      uri: uri(context, DID_B),
      fromUser: "carrier",
      toUser: DID_B,
    });
    assert.is(unknown.start, "SIP/2.0 403 Forbidden");
  },
);

edgeSuite("an unknown org or DID gets a clean SIP error, never a guessed node", async (context) => {
  const org = await context.phone.request({
    method: "REGISTER",
    uri: uri(context),
    fromUser: "org_cccccccc-0000-4000-8000-000000000003_101",
    toUser: "org_cccccccc-0000-4000-8000-000000000003_101",
  });
  assert.is(org.start, "SIP/2.0 404 Unknown Organization");
  const invite = await context.phone.request({
    method: "INVITE",
    uri: uri(context, "101"),
    fromUser: "org_cccccccc-0000-4000-8000-000000000003_101",
    toUser: "101",
  });
  assert.is(invite.start, "SIP/2.0 404 Unknown Organization");
  const did = await context.carrier.request({
    method: "INVITE",
    uri: uri(context, "+918065978099"),
    fromUser: "carrier",
    toUser: "+918065978099",
  });
  assert.is(did.start, "SIP/2.0 404 Unknown Number");
  const hostile = await context.phone.request({
    method: "REGISTER",
    uri: uri(context),
    fromUser: "x",
    toUser: `${A}1$(hdr(X))`,
  });
  assert.is(hostile.start, "SIP/2.0 403 Forbidden");
});

edgeSuite(
  "a DID moved from A to B routes to node 2 without a Kamailio restart",
  async (context) => {
    const before = await context.carrier.call({
      uri: uri(context, DID_A),
      fromUser: "carrier",
      toUser: DID_A,
    });
    assert.is(header(before.answer, "x-node"), "node-1");

    const moved = edgeStateFor(context.node1, context.node2, [], [DID_A, DID_B]);
    const tables = buildEdgeTables({ ...moved, listen: LISTEN_UNUSED }, []);
    const result = await applyEdgeTables(context.edge.rpc, context.edge.dataDir, tables);
    assert.equal(result, {
      orgKeysChanged: 0,
      didKeysChanged: 3, // every alias of the number
      dispatcherReloaded: false,
      carriersReloaded: false,
    });
    await verifyEdge(context.edge.rpc, tables);
    // The files a restarted edge would load say the same.
    assert.match(
      readFileSync(join(context.edge.dataDir, "db/edge_dids"), "utf8"),
      `:${DID_A}:0:0:${B}:0`,
    );

    const after = await context.carrier.call({
      uri: uri(context, DID_A),
      fromUser: "carrier",
      toUser: DID_A,
    });
    assert.is(header(after.answer, "x-node"), "node-2");
    context.state = moved;
  },
);

edgeSuite(
  "node 1 dead: once probing marks it down, org A goes to its standby on node 2",
  async (context) => {
    const n1 = `sip:${context.node1.address}:${context.node1.port}`;
    await waitForNodeState(context.edge.rpc, n1, "A", 10_000);
    await context.node1.kill();
    await waitForNodeState(context.edge.rpc, n1, "I", 10 * PROBE_SECONDS * 1000);
    const a = await context.phone.call({
      uri: uri(context, "102"),
      fromUser: `${A}101`,
      toUser: "102",
    });
    assert.is(header(a.answer, "x-node"), "node-2");
    assert.is(a.bye.status, 200);
    const register = await context.phone.request({
      method: "REGISTER",
      uri: uri(context),
      fromUser: `${A}101`,
      toUser: `${A}101`,
    });
    assert.is(header(register, "x-node"), "node-2");
  },
);

/** Only the tables are built from it: listen settings play no part in them. */
const LISTEN_UNUSED = {
  sip_address: EDGE_ADDRESS,
  sip_port: 5060,
  rpc_port: 5081,
  data_dir: "/unused",
  probe_interval: PROBE_SECONDS,
};

if (missing) {
  console.warn(`SKIPPED edge routing: ${missing}`);
} else {
  edgeSuite.run();
}
