// Calls the API places and changes (SPEC.md §4.5): click-to-call, originate-to-ai, transfer and hold,
// against a recording engine port. What reaches the engine is asserted field by field: the org's
// own contexts, its account code, the caller ID of rules 1-6, nothing unchecked from the body;
// another org's DID or call is refused; an Idempotency-Key places one call only.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { OriginateRequest } from "../../src/domain/calls/call-control.js";
import type { LiveCall, LiveCallsView } from "../../src/domain/calls/live-calls.js";
import { expireIdempotencyKeys } from "../../src/domain/idempotency.js";
import { insertUser, sipUser } from "../integration/helpers.js";
import { addToPool, assignFromPool, orgKey, seedUser, type TestOrg } from "./dids-fixtures.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

const test = suite("call control API");

let app: TestApp;
let acme: TestOrg;
let bravo: TestOrg;
let charlie: TestOrg;
const originated: OriginateRequest[] = [];
const transfers: [channel: string, context: string, exten: string][] = [];
const liveByOrg = new Map<string, LiveCall[]>();

const live: LiveCallsView = {
  callsOf: (orgId) => liveByOrg.get(orgId) ?? [],
  callOf: (orgId, linkedid) =>
    (liveByOrg.get(orgId) ?? []).find((call) => call.linkedid === linkedid) ?? null,
  tracking: true,
};

// A tiny engine for hold/unhold: channel variables, who is bridged to whom, where each channel is.
const vars = new Map<string, Map<string, string>>();
const bridged = new Map<string, string>();
const placeOf = new Map<string, string>();
const holdActions: string[] = [];
const heldEngine = {
  async getVariable(channel: string, name: string) {
    if (!placeOf.has(channel)) return null;
    if (name === "BRIDGEPEER") return bridged.get(channel) ?? "";
    return vars.get(channel)?.get(name) ?? "";
  },
  async setVariable(channel: string, name: string, value: string) {
    holdActions.push(`Setvar ${channel} ${name}=${value}`);
    if (!vars.has(channel)) vars.set(channel, new Map());
    vars.get(channel)!.set(name, value);
  },
  async redirect(
    channel: string,
    to: { context: string; exten: string },
    extra: { channel: string; to: { context: string; exten: string } },
  ) {
    holdActions.push(
      `Redirect ${channel} ${to.context},${to.exten} + ${extra.channel} ${extra.to.context},${extra.to.exten}`,
    );
    for (const c of [channel, extra.channel]) bridged.delete(c);
    placeOf.set(channel, `${to.context},${to.exten}`);
    placeOf.set(extra.channel, `${extra.to.context},${extra.to.exten}`);
  },
  async bridge(a: string, b: string) {
    holdActions.push(`Bridge ${a} ${b}`);
    if (!placeOf.has(a) || !placeOf.has(b)) return false;
    bridged.set(a, b);
    bridged.set(b, a);
    return true;
  },
};

const post = (org: TestOrg, path: string, body: unknown, headers: Record<string, string> = {}) =>
  app.request("POST", `/api/v1${path}`, { headers: { ...orgKey(org), ...headers }, body });

/** A carrier trunk (its own address per org) and a route for US numbers, 10 or 11 digits. */
async function seedUsRoute(org: TestOrg, host: string) {
  const trunk = await post(org, "/trunks", { name: "carrier", host });
  assert.is(trunk.status, 201, trunk.text);
  const route = await post(org, "/outbound-routes", {
    name: "US",
    patterns: ["_NXXNXXXXXX", "_1NXXNXXXXXX"],
    trunk: "carrier",
  });
  assert.is(route.status, 201, route.text);
}

async function seedAgent(orgId: string, extension: string) {
  await insertUser(app.db, orgId, {
    ...sipUser(`org_${orgId}_`, extension),
    routing_type: "ai_agent",
  });
}

test.before(async () => {
  app = await startTestApp({
    liveCalls: live,
    callControl: {
      hangup: async () => assert.unreachable("no hangup here"),
      blindTransfer: async (channel, context, exten) =>
        void transfers.push([channel, context, exten]),
      originate: async (request) => void originated.push(request),
      ...heldEngine,
    },
  });
  acme = await app.createOrg("Acme");
  bravo = await app.createOrg("Bravo");
  charlie = await app.createOrg("Charlie");
  await seedUser(app, acme.id, "101");
  await seedUser(app, acme.id, "102");
  await seedAgent(acme.id, "150");
  await seedUsRoute(acme, "198.51.100.1");
  await seedUsRoute(bravo, "198.51.100.2");
  await seedUsRoute(charlie, "198.51.100.3");
  await seedAgent(charlie.id, "150");
  await assignFromPool(app, acme, (await addToPool(app, "+918065978011")).id);
  await assignFromPool(app, bravo, (await addToPool(app, "+918065978012")).id);
});

test.after(() => app.close());

test.before.each(() => {
  originated.length = 0;
  transfers.length = 0;
});

test("click-to-call rings the user through the org's internal context, then its outbound routes", async () => {
  const res = await post(acme, "/calls/click-to-call", { from: "101", to: "+14155550100" });
  assert.is(res.status, 200, res.text);
  assert.is(originated.length, 1);
  const [call] = originated;
  const prefix = `org_${acme.id}_`;
  assert.equal(
    { ...call, channelId: "", otherChannelId: "" },
    {
      channel: `Local/101@${prefix}internal`,
      context: `${prefix}outbound`,
      exten: "+14155550100",
      callerId: '"+14155550100" <+14155550100>',
      account: acme.id,
      channelId: "",
      otherChannelId: "",
      timeoutMs: 30_000,
      // No request caller_id: the route's own lookup by extension decides (rules 2-5).
      variables: { CALLER_EXT: "101" },
    },
  );
  assert.equal(res.body, {
    success: true,
    linkedid: call!.channelId,
    to: "+14155550100",
    caller_id: "+918065978011",
    // The org's first DID became its default when it was assigned.
    caller_id_source: "org_default_did",
  });
});

test("rule 1: the org's own assigned DID is passed on as E.164; another org's is 403", async () => {
  const own = await post(acme, "/calls/click-to-call", {
    from: "101",
    to: "4155550100",
    caller_id: "08065978011",
  });
  assert.is(own.status, 200, own.text);
  assert.is(own.body.caller_id_source, "request");
  assert.equal(originated[0]!.variables, { CALLER_EXT: "101", PBX_REQUEST_CID: "+918065978011" });
  originated.length = 0;
  for (const caller_id of ["+918065978012", "+918065978019"]) {
    expectError(
      await post(acme, "/calls/click-to-call", { from: "101", to: "4155550100", caller_id }),
      403,
      "caller_id_not_assigned",
    );
  }
  assert.equal(originated, [], "a refused caller ID places no call");
});

test("nothing unchecked reaches the engine: bad numbers and unknown extensions", async () => {
  for (const to of ["123", "4155550100\r\nAction: Command", "${SHELL(id)}", "41555-50100"]) {
    const res = await post(acme, "/calls/click-to-call", { from: "101", to });
    assert.is(res.status, 400, `${to}: ${res.text}`);
  }
  expectError(
    await post(acme, "/calls/click-to-call", { from: "199", to: "4155550100" }),
    404,
    "Extension 199 is not an active user of the org",
  );
  // Another org's extension is not the caller's either.
  await seedUser(app, bravo.id, "202");
  expectError(
    await post(acme, "/calls/click-to-call", { from: "202", to: "4155550100" }),
    404,
    "Extension 202 is not an active user of the org",
  );
  assert.equal(originated, []);
});

test("a number no outbound route of the org matches is a 400 naming it, before the engine is asked", async () => {
  // Ten digits starting 0: neither _NXXNXXXXXX (N is 2-9) nor _1NXXNXXXXXX takes it.
  const unrouted = "0876543210";
  expectError(
    await post(acme, "/calls/click-to-call", { from: "101", to: unrouted }),
    400,
    `No outbound route of the org matches ${unrouted}`,
  );
  expectError(
    await post(acme, "/calls/click-to-call", { from: "101", to: `+44${unrouted}` }),
    400,
    `No outbound route of the org matches +44${unrouted}`,
  );
  expectError(
    await post(acme, "/calls/originate-to-ai", { to: unrouted }),
    400,
    `No outbound route of the org matches ${unrouted}`,
  );
  assert.equal(originated, []);
});

test("Idempotency-Key: same key and org answers the first result and places one call", async () => {
  const body = { from: "101", to: "4155550100" };
  const headers = { "Idempotency-Key": "order-42" };
  const first = await post(acme, "/calls/click-to-call", body, headers);
  const again = await post(acme, "/calls/click-to-call", body, headers);
  assert.is(first.status, 200, first.text);
  assert.is(again.status, 200, again.text);
  assert.equal(again.body, first.body);
  assert.is(originated.length, 1, "the repeat placed no second call");
  expectError(
    await post(acme, "/calls/click-to-call", { ...body, to: "4155550199" }, headers),
    409,
    "Idempotency-Key was already used for a different request",
  );
  // The same key is another org's own: it places bravo's call.
  await post(bravo, "/calls/click-to-call", { from: "202", to: "4155550100" }, headers);
  assert.is(originated.length, 2);
  assert.is(originated[1]!.account, bravo.id);
  expectError(
    await post(acme, "/calls/click-to-call", body, { "Idempotency-Key": "has space" }),
    400,
    "Idempotency-Key must be 1-255 printable characters",
  );
});

test("originate-to-ai dials out first, then connects the org's AI agent; rule 6", async () => {
  const res = await post(acme, "/calls/originate-to-ai", { to: "4155550100" });
  assert.is(res.status, 200, res.text);
  const prefix = `org_${acme.id}_`;
  const [call] = originated;
  assert.is(call!.channel, `Local/4155550100@${prefix}outbound`);
  assert.is(call!.context, `${prefix}internal`);
  assert.is(call!.exten, "150");
  assert.equal(call!.variables, { CALLER_EXT: "150" });
  assert.is(res.body.caller_id, "+918065978011");
  // Charlie has an AI agent but no DID, so no caller ID can be had.
  expectError(
    await post(charlie, "/calls/originate-to-ai", { to: "4155550100" }),
    400,
    "no_caller_id_available",
  );
  expectError(
    await post(charlie, "/calls/originate-to-ai", { to: "4155550100", caller_id: "+918065978011" }),
    403,
    "caller_id_not_assigned",
  );
  expectError(
    await post(bravo, "/calls/originate-to-ai", { to: "4155550100" }),
    400,
    "The org has no active ai_agent user to connect the call to",
  );
  assert.is(originated.length, 1);
  const key = { "Idempotency-Key": "ai-1" };
  const a = await post(acme, "/calls/originate-to-ai", { to: "4155550101" }, key);
  const b = await post(acme, "/calls/originate-to-ai", { to: "4155550101" }, key);
  assert.equal(b.body, a.body);
  assert.is(originated.length, 2);
});

/** A live call of Acme whose channels are all up; uniqueids count on from the linkedid's. */
function acmeLiveCall(linkedid: string, channels: string[]): LiveCall {
  const [seconds, first] = linkedid.split(".");
  return {
    linkedid,
    since: new Date(0),
    channels: channels.map((channel, i) => ({
      channel,
      state: "Up",
      uniqueid: `${seconds}.${Number(first) + i}`,
      linkedid,
      callerIdNum: "",
      callerIdName: "",
      connectedLineNum: "",
      accountcode: acme.id,
      context: "",
      exten: "",
      orgId: acme.id,
      since: new Date(0),
    })),
  };
}

test("transfer: the org's answered phone hands its peer over; another org's call is 404", async () => {
  const prefix = `org_${acme.id}_`;
  const phone = `PJSIP/${prefix}101-0000000a`;
  liveByOrg.set(acme.id, [
    acmeLiveCall("1700000000.10", [`PJSIP/${prefix}trunk_carrier-00000009`, phone]),
  ]);
  const path = "/calls/1700000000.10/transfer";
  expectError(await post(bravo, path, { to: "102" }), 404, "Call not found");
  const bad = await post(acme, path, { to: "10;2" });
  assert.is(bad.status, 400);
  assert.match(bad.body.error, "must be an extension or a phone number");
  expectError(
    await post(acme, path, { to: "102", channel: "PJSIP/other-1" }),
    404,
    "Channel not found in this call",
  );
  // Neither an extension of the org nor a number its routes take: the engine would drop the
  // caller, so nothing is sent.
  expectError(
    await post(acme, path, { to: "555" }),
    400,
    "555 is not an extension of the org and no outbound route of the org matches it",
  );
  assert.equal(transfers, []);
  const res = await post(acme, path, { to: "102" });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { success: true, channel: phone, to: "102" });
  assert.equal(transfers, [[phone, `${prefix}internal`, "102"]]);
});

test("hold sends the phone's peer to the org's music, the phone to wait; unhold bridges them again", async () => {
  const prefix = `org_${acme.id}_`;
  const phone = `PJSIP/${prefix}101-0000000c`;
  const peer = `PJSIP/${prefix}trunk_carrier-0000000b`;
  liveByOrg.set(acme.id, [acmeLiveCall("1700000000.20", [peer, phone])]);
  for (const c of [phone, peer]) placeOf.set(c, "bridge");
  bridged.set(phone, peer);
  bridged.set(peer, phone);
  holdActions.length = 0;
  const hold = "/calls/1700000000.20/hold";
  const unhold = "/calls/1700000000.20/unhold";
  // Another org's call is an unknown call: nothing reaches the engine.
  expectError(await post(bravo, hold, {}), 404, "Call not found");
  expectError(await post(bravo, unhold, {}), 404, "Call not found");
  expectError(
    await post(acme, hold, { channel: "PJSIP/other-1" }),
    404,
    "Channel not found in this call",
  );
  expectError(await post(acme, unhold, {}), 409, "The call is not on hold");
  assert.equal(holdActions, []);

  const held = await post(acme, hold, {});
  assert.is(held.status, 200, held.text);
  assert.equal(held.body, { success: true, channel: phone, held: peer });
  assert.equal(holdActions, [
    `Setvar ${phone} PBX_HOLD_PEER=${peer}`,
    `Redirect ${peer} ${prefix}hold,s + ${phone} ${prefix}hold,park`,
  ]);
  assert.is(placeOf.get(peer), `${prefix}hold,s`);
  expectError(await post(acme, hold, {}), 409, "The call is already on hold");

  holdActions.length = 0;
  const back = await post(acme, unhold, {});
  assert.is(back.status, 200, back.text);
  assert.equal(back.body, { success: true, channel: phone, held: peer });
  assert.equal(holdActions, [`Bridge ${phone} ${peer}`, `Setvar ${phone} PBX_HOLD_PEER=`]);
  assert.is(bridged.get(phone), peer);

  // The held party hung up while on hold: nothing to bridge back to.
  await post(acme, hold, {});
  placeOf.delete(peer);
  expectError(await post(acme, unhold, {}), 409, "The held party has hung up");
  expectError(await post(acme, unhold, {}), 409, "The call is not on hold");
});

test("each operation needs its calls.* permission for ak_ keys", async () => {
  const reader = await app.request("POST", "/api/v1/api-keys", {
    headers: orgKey(acme),
    body: { name: "reader", permissions: ["calls.read"] },
  });
  const headers = { "x-api-key": reader.body.api_key };
  const cases: [string, unknown, string][] = [
    ["/calls/click-to-call", { from: "101", to: "4155550100" }, "calls.click_to_call"],
    ["/calls/originate-to-ai", { to: "4155550100" }, "calls.originate_ai"],
    ["/calls/1700000000.10/transfer", { to: "102" }, "calls.transfer"],
    ["/calls/1700000000.10/hold", {}, "calls.hold"],
    ["/calls/1700000000.10/unhold", {}, "calls.hold"],
  ];
  for (const [path, body, permission] of cases) {
    const res = await app.request("POST", `/api/v1${path}`, { headers, body });
    expectError(res, 403, `API key lacks permission: ${permission}`);
  }
  assert.equal(originated, []);
  assert.equal(transfers, []);
});

test("an Idempotency-Key expires after 24 hours: reusable by its org, swept by the daily housekeeping", async () => {
  const body = { from: "101", to: "4155550100" };
  const headers = { "Idempotency-Key": "daily-7" };
  const placed = originated.length;
  await post(acme, "/calls/click-to-call", body, headers);
  await post(bravo, "/calls/click-to-call", { from: "202", to: "4155550100" }, headers);
  app.clock.advance(23 * 60 * 60);
  const replay = await post(acme, "/calls/click-to-call", { ...body, to: "4155550199" }, headers);
  expectError(replay, 409, "Idempotency-Key was already used for a different request");
  assert.is(originated.length, placed + 2, "within a day the key is still taken");
  app.clock.advance(2 * 60 * 60);
  const reused = await post(acme, "/calls/click-to-call", { ...body, to: "4155550199" }, headers);
  assert.is(reused.status, 200, reused.text);
  assert.is(originated.length, placed + 3, "after a day the key places a new call");
  // Bravo's claim of the same key is a day old too: the sweep removes it, and only expired ones.
  const swept = await expireIdempotencyKeys(app.db, app.clock.now);
  assert.ok(swept >= 1, `swept ${swept}`);
  const left = await app.db
    .selectFrom("idempotency_keys")
    .select(["org_id", "key"])
    .where("key", "=", "daily-7")
    .execute();
  assert.equal(left, [{ org_id: acme.id, key: "daily-7" }], "acme's fresh claim stays");
});

test.run();
