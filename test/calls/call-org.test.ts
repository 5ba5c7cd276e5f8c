// SPEC.md §1 rule 3, exactly: accountcode, peeraccount, or the org's context prefix in the
// channel — and nothing wider (the past defect matched every org's AI-outbound calls).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { OrgDirectory, RefreshingOrgDirectory } from "../../src/domain/call-org.js";
import { LiveCalls } from "../../src/domain/live-calls.js";

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

test("a new org is found after a reload, and misses reload at most once per interval", async () => {
  let loads = 0;
  const known = [{ id: A, context_prefix: `org_${A}_` }];
  let now = 0;
  const directory = new RefreshingOrgDirectory(
    async () => {
      loads++;
      return [...known];
    },
    () => new Date(now),
    1000,
  );
  await directory.refresh();
  known.push({ id: B, context_prefix: "org_b_" });
  assert.is(await directory.orgOf({ ...none, accountcode: B }), null, "too soon to reload");
  now = 1000;
  assert.is(await directory.orgOf({ ...none, accountcode: B }), B);
  assert.is(await directory.orgOf({ ...none, accountcode: "carrier" }), null);
  assert.is(loads, 2, "the miss right after a reload does not reload again");
});

test("live channels of an org created after the last load show once the directory knows it", async () => {
  // Seen in the engine suite: the directory was loaded before the org existed, the call's
  // channel events all came before any reload, and the org's live call never showed.
  const known = [{ id: A, context_prefix: `org_${A}_` }];
  let now = 0;
  const directory = new RefreshingOrgDirectory(
    async () => [...known],
    () => new Date(now),
    1000,
  );
  await directory.refresh();
  const live = new LiveCalls(
    (evidence) => directory.orgOfKnown(evidence),
    () => new Date(now),
  );
  known.push({ id: B, context_prefix: "org_b_" });
  now = 1000;
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
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(
    live.callsOf(B).map((call) => call.linkedid),
    ["1.1"],
  );
  assert.equal(live.callsOf(A), [], "and only for its own org");
});

test.run();
