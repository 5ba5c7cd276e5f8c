// SPEC.md §1 rule 3, exactly: accountcode, peeraccount, or the org's context prefix in the
// channel — and nothing wider (the past defect matched every org's AI-outbound calls).
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  OrgDirectory,
  type OrgMarker,
  RefreshingOrgDirectory,
} from "../../src/domain/calls/call-org.js";
import { LiveCalls } from "../../src/domain/calls/live-calls.js";

const A = "aaaaaaaa-0000-4000-8000-000000000001";
const B = "bbbbbbbb-0000-4000-8000-000000000002";
const orgs = new OrgDirectory([
  { id: A, context_prefix: `org_${A}_` },
  { id: B, context_prefix: "org_b_" },
]);
const none = { accountcode: "", peeraccount: "", channel: "" };

test("accountcode, then peeraccount, then the context prefix in the channel", () => {
  assert.is(orgs.orgOf({ ...none, accountcode: A }), A);
  assert.is(orgs.orgOf({ ...none, peeraccount: B }), B);
  assert.is(orgs.orgOf({ ...none, channel: "PJSIP/org_b_101-00000001" }), B);
  assert.is(orgs.orgOf({ accountcode: A, peeraccount: B, channel: "PJSIP/org_b_1-0" }), A);
  assert.is(orgs.orgOf({ accountcode: "x", peeraccount: B, channel: `PJSIP/org_${A}_1-0` }), B);
});

test("nothing else matches: unknown accounts, AI-outbound channels with no org marker", () => {
  assert.is(orgs.orgOf(none), null);
  assert.is(orgs.orgOf({ ...none, accountcode: "ai-outbound" }), null);
  assert.is(orgs.orgOf({ ...none, channel: "PJSIP/ai_gateway-00000001" }), null);
  assert.is(orgs.orgOf({ ...none, channel: "Local/919812345678@ai-outbound-0001;1" }), null);
  // An org id elsewhere in the channel name is not its context prefix.
  assert.is(orgs.orgOf({ ...none, channel: `Local/${A}@somewhere-0001;2` }), null);
  // Case and partial ids do not match.
  assert.is(orgs.orgOf({ ...none, accountcode: A.toUpperCase() }), null);
  assert.is(orgs.orgOf({ ...none, accountcode: A.slice(0, 8) }), null);
});

test("the longest contained prefix wins whatever the listing order", () => {
  const nested = new OrgDirectory([
    { id: "short", context_prefix: "b_" },
    { id: "long", context_prefix: "org_b_" },
  ]);
  assert.is(nested.orgOf({ ...none, channel: "PJSIP/org_b_101-1" }), "long");
  assert.is(nested.orgOf({ ...none, channel: "PJSIP/b_101-1" }), "short");
});

/** The store's answer in memory: the generation moves when an org is added. */
function markerSource(known: OrgMarker[]) {
  const source = {
    loads: 0,
    generations: 0,
    list: async () => {
      source.loads++;
      return [...known];
    },
    generation: async () => {
      source.generations++;
      return known.length;
    },
  };
  return source;
}

test("a new org is found on its first event, however soon after the last load; other misses never reload", async () => {
  const known: OrgMarker[] = [{ id: A, context_prefix: `org_${A}_` }];
  const source = markerSource(known);
  const directory = new RefreshingOrgDirectory(source);
  await directory.refresh();
  assert.is(await directory.orgOf({ ...none, accountcode: "carrier" }), null);
  assert.is(source.loads, 1, "a miss with no org added does not reload");
  known.push({ id: B, context_prefix: "org_b_" });
  assert.is(await directory.orgOf({ ...none, accountcode: B }), B, "no wait after the last load");
  assert.is(await directory.orgOf({ ...none, channel: "PJSIP/org_b_101-1" }), B);
  assert.is(await directory.orgOf({ ...none, accountcode: "carrier" }), null);
  assert.is(await directory.ownerOfName("carrier_aor"), null);
  assert.is(source.loads, 2, "one reload for the one org added");
});

test("live channels of an org created after the last load show once the directory knows it", async () => {
  // Seen in the engine suite: the directory was loaded before the org existed, the call's
  // channel events all came before any reload, and the org's live call never showed.
  const known: OrgMarker[] = [{ id: A, context_prefix: `org_${A}_` }];
  const directory = new RefreshingOrgDirectory(markerSource(known));
  await directory.refresh();
  const live = new LiveCalls(
    (evidence) => directory.orgOfKnown(evidence),
    () => new Date(0),
  );
  known.push({ id: B, context_prefix: "org_b_" });
  live.channelEvent("newchannel", {
    uniqueid: "1.1",
    linkedid: "1.1",
    channel: "PJSIP/org_b_101-00000001",
    state: "Up",
    callerIdNum: "101",
    callerIdName: "",
    connectedLineNum: "",
    accountcode: B,
    context: "org_b_internal",
    exten: "102",
  });
  // The miss above started a reload in the background; the next read asks again.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(
    live.callsOf(B).map((call) => call.linkedid),
    ["1.1"],
  );
  assert.equal(live.callsOf(A), [], "and only for its own org");
});

test.run();
