// `/calls*` over call records ingested from real engine event sequences (fixtures/calls,
// rewritten for two orgs made through the API): tenant isolation (rule 3 at ingest, every read
// by org), `calls.read` for `ak_` keys, pagination, history filters, live calls, journeys.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import type { LiveCallsView } from "../../src/domain/calls/live-calls.js";
import { callFixtures, ORG_A, ORG_B, rewriteOrgs } from "../calls/fixture-events.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

interface Org {
  id: string;
  api_key: string;
}

let app: TestApp;
/** Channels the API asked the engine to hang up. */
const hungUp: string[] = [];
let tracking: CallTracking;
let acme: Org;
let bravo: Org;
const fixtures = callFixtures();

// The app is built before the orgs exist; its live view forwards to the tracking made after.
const liveView: LiveCallsView = {
  callsOf: (orgId) => tracking.live.callsOf(orgId),
  callOf: (orgId, linkedid) => tracking.live.callOf(orgId, linkedid),
  get tracking() {
    return tracking.live.tracking;
  },
};

const test = suite("calls API");

/** Feeds a recorded scenario as a call of acme (fixture org A) and bravo (fixture org B). */
function scenarioEvents(scenario: string, ids: readonly (readonly [string, string])[] = []) {
  return rewriteOrgs(fixtures.get(scenario)!.events, [
    [ORG_A, acme.id],
    [ORG_B, bravo.id],
    ["org_b_", `org_${bravo.id}_`],
    ...ids,
  ]);
}

/** The same call again, under other channel ids (a second call through the same path). */
function anotherCall(scenario: string): [string, string][] {
  const first = String(fixtures.get(scenario)!.events[0]!.uniqueid);
  const epoch = first.split(".")[0]!;
  return [[`${epoch}.`, `${Number(epoch) + 100}.`]];
}

async function replay(
  scenario: string,
  upTo?: (event: Record<string, unknown>) => boolean,
  ids: readonly (readonly [string, string])[] = [],
) {
  const events = scenarioEvents(scenario, ids);
  for (const event of events) {
    tracking.feed(event);
    if (upTo?.(event)) break;
  }
  await tracking.idle();
}

const key = (org: Org) => ({ "x-api-key": org.api_key });

test.before(async () => {
  app = await startTestApp({
    liveCalls: liveView,
    callControl: {
      hangup: async (channel) => void hungUp.push(channel),
      blindTransfer: async () => assert.unreachable("no transfer here"),
      originate: async () => assert.unreachable("no originate here"),
      getVariable: async () => {
        throw new Error("no hold here");
      },
      setVariable: async () => assert.unreachable("no hold here"),
      redirect: async () => assert.unreachable("no hold here"),
      bridge: async () => {
        throw new Error("no hold here");
      },
    },
  });
  acme = await app.createOrg("Acme");
  bravo = await app.createOrg("Bravo");
  tracking = startCallTracking({ db: app.db, clock: () => app.clock.now });
  await tracking.idle();
  tracking.live.resync([]);
  for (const scenario of ["inbound-ivr-queue", "missed-inbound", "internal", "outbound-busy"]) {
    await replay(scenario);
  }
});

test.after(async () => {
  await tracking.stop();
  await app.close();
});

test("history: one call per linkedid, only the caller's org", async () => {
  const a = await app.request("GET", "/api/v1/calls/history", { headers: key(acme) });
  assert.is(a.status, 200, a.text);
  assert.is(a.body.total, 3);
  assert.equal(a.body.pagination, { total: 3, limit: 100, offset: 0 });
  const linked = a.body.calls.map((c: { linkedid: string }) => c.linkedid);
  assert.is(new Set(linked).size, 3);
  assert.equal(a.body.calls.map((c: { direction: string }) => c.direction).sort(), [
    "inbound",
    "internal",
    "outbound",
  ]);
  const b = await app.request("GET", "/api/v1/calls/history", { headers: key(bravo) });
  assert.is(b.body.total, 1);
  assert.is(b.body.calls[0].direction, "inbound");
  assert.not.ok(linked.includes(b.body.calls[0].linkedid), "bravo's call is not acme's");
});

test("another org's journey is 404 `Call not found`; the own one lists the legs in order", async () => {
  const b = await app.request("GET", "/api/v1/calls/history", { headers: key(bravo) });
  const linkedid = b.body.calls[0].linkedid as string;
  expectError(
    await app.request("GET", `/api/v1/calls/${linkedid}/journey`, { headers: key(acme) }),
    404,
    "Call not found",
  );
  const own = await app.request("GET", `/api/v1/calls/${linkedid}/journey`, {
    headers: key(bravo),
  });
  assert.is(own.status, 200, own.text);
  assert.is(own.body.live, false);
  assert.is(own.body.events.at(-1).event, "Hangup", "the steps end with the hangup");
  assert.equal(
    own.body.legs.map((leg: { lastapp: string }) => leg.lastapp),
    ["Dial"],
  );
  const outbound = (
    await app.request("GET", "/api/v1/calls/history?direction=outbound", { headers: key(acme) })
  ).body.calls[0];
  const legs = (
    await app.request("GET", `/api/v1/calls/${outbound.linkedid}/journey`, { headers: key(acme) })
  ).body.legs as { calldate: string; sequence: number }[];
  assert.is(legs.length, 3);
  const order = legs.map((leg) => `${leg.calldate}/${String(leg.sequence).padStart(6, "0")}`);
  assert.equal(order, [...order].sort(), "legs in the order the engine started them");
});

test("filters: direction, disposition, number, extension, date range", async () => {
  const get = async (query: string) => {
    const res = await app.request("GET", `/api/v1/calls/history?${query}`, { headers: key(acme) });
    assert.is(res.status, 200, res.text);
    return res.body.calls.map((c: { direction: string }) => c.direction).sort();
  };
  assert.equal(await get("direction=internal"), ["internal"]);
  assert.equal(await get("disposition=BUSY"), ["outbound"]);
  assert.equal(await get("disposition=NO%20ANSWER"), []);
  assert.equal(await get("number=9812345678"), ["inbound", "outbound"]);
  assert.equal(await get("extension=102"), ["internal"]);
  assert.equal(await get("extension=600"), ["inbound"]);
  assert.equal(await get("from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z"), []);
  assert.equal((await get("from=2000-01-01T00:00:00Z")).length, 3);
  const bad = await app.request("GET", "/api/v1/calls/history?disposition=LOST", {
    headers: key(acme),
  });
  assert.is(bad.status, 400);
  assert.type(bad.body.error, "string");
});

test("pagination: limit and offset, the documented maximum enforced", async () => {
  const first = await app.request("GET", "/api/v1/calls/history?limit=2", { headers: key(acme) });
  const second = await app.request("GET", "/api/v1/calls/history?limit=2&offset=2", {
    headers: key(acme),
  });
  assert.equal(first.body.pagination, { total: 3, limit: 2, offset: 0 });
  assert.is(first.body.calls.length, 2);
  assert.is(second.body.calls.length, 1);
  const all = [...first.body.calls, ...second.body.calls].map((c) => c.linkedid);
  assert.is(new Set(all).size, 3);
  // The page limits of every list (domain/page-window.ts): at most 500 rows, 100 by default.
  const tooMany = await app.request("GET", "/api/v1/calls/history?limit=501", {
    headers: key(acme),
  });
  assert.is(tooMany.status, 400);
  const largest = await app.request("GET", "/api/v1/calls/history?limit=500", {
    headers: key(acme),
  });
  assert.is(largest.status, 200, largest.text);
  const defaults = await app.request("GET", "/api/v1/calls", { headers: key(acme) });
  assert.equal(defaults.body.pagination, { total: 3, limit: 100, offset: 0 });
});

test("`ak_` keys need calls.read: 403 naming it, 200 with it", async () => {
  const make = async (permissions: string[]) => {
    const res = await app.request("POST", "/api/v1/api-keys", {
      headers: key(acme),
      body: { name: "calls", permissions },
    });
    assert.is(res.status, 201, res.text);
    return { "x-api-key": res.body.api_key as string };
  };
  const crm = await make(["crm.read"]);
  for (const path of ["/calls", "/calls/history", "/calls/count", "/calls/x.1/journey"]) {
    expectError(
      await app.request("GET", `/api/v1${path}`, { headers: crm }),
      403,
      "API key lacks permission: calls.read",
    );
  }
  const reader = await make(["calls.read"]);
  const res = await app.request("GET", "/api/v1/calls/history", { headers: reader });
  assert.is(res.status, 200);
  assert.is(res.body.total, 3);
  expectError(await app.request("GET", "/api/v1/calls/history"), 401, "Authentication required");
});

test("live calls: listed first and marked while up, counted as active, gone after", async () => {
  const second = anotherCall("inbound-ivr-queue");
  await replay("inbound-ivr-queue", (event) => event.event === "QueueCallerJoin", second);
  const during = await app.request("GET", "/api/v1/calls", { headers: key(acme) });
  assert.is(during.status, 200, during.text);
  assert.is(during.body.total, 4);
  assert.equal(during.body.pagination, { total: 4, limit: 100, offset: 0 });
  assert.is(during.body.calls[0].live, true);
  assert.is(during.body.calls[0].status, "Up");
  assert.equal(
    during.body.calls.slice(1).map((c: { live: boolean }) => c.live),
    [false, false, false],
  );
  const counts = await app.request("GET", "/api/v1/calls/count", { headers: key(acme) });
  assert.equal(counts.body, {
    total: 3,
    active: 1,
    answered: 1,
    missed: 2,
    inbound: 1,
    outbound: 1,
    internal: 1,
    live_tracking: true,
  });
  const bravoDuring = await app.request("GET", "/api/v1/calls/count", { headers: key(bravo) });
  assert.is(bravoDuring.body.active, 0, "acme's live call is not bravo's");
  const page2 = await app.request("GET", "/api/v1/calls?limit=1&offset=1", { headers: key(acme) });
  assert.is(page2.body.calls[0].live, false, "the page after the live call starts the history");
  // The rest of the call: its channels hang up and its records arrive.
  const events = scenarioEvents("inbound-ivr-queue", second);
  const from = events.findIndex((event) => event.event === "QueueCallerJoin");
  for (const event of events.slice(from + 1)) tracking.feed(event);
  await tracking.idle();
  const after = await app.request("GET", "/api/v1/calls", { headers: key(acme) });
  assert.ok(after.body.calls.every((c: { live: boolean }) => c.live === false));
  const count = await app.request("GET", "/api/v1/calls/count", { headers: key(acme) });
  assert.is(count.body.active, 0);
  assert.is(count.body.total, 4, "the finished call is history now");
});

test("hangup: only the org's own channels of its own live call, with calls.hangup", async () => {
  const third = anotherCall("inbound-ivr-queue").map(
    ([from, to]) => [from, `9${to}`] as [string, string],
  );
  await replay("inbound-ivr-queue", (event) => event.event === "QueueCallerJoin", third);
  const live = (await app.request("GET", "/api/v1/calls", { headers: key(acme) })).body.calls[0];
  assert.is(live.live, true);
  const path = `/api/v1/calls/${live.linkedid}/hangup`;
  expectError(await app.request("POST", path, { headers: key(bravo) }), 404, "Call not found");
  const reader = await app.request("POST", "/api/v1/api-keys", {
    headers: key(acme),
    body: { name: "reader", permissions: ["calls.read"] },
  });
  expectError(
    await app.request("POST", path, { headers: { "x-api-key": reader.body.api_key } }),
    403,
    "API key lacks permission: calls.hangup",
  );
  assert.equal(hungUp, [], "nothing was hung up by the refused requests");
  const res = await app.request("POST", path, { headers: key(acme) });
  assert.is(res.status, 200, res.text);
  // The org's leg only (;2): the caller's half carries no org marker and is not acme's to end.
  assert.equal(
    res.body.channels,
    live.channels.map((c: { channel: string }) => c.channel),
  );
  assert.equal(hungUp, res.body.channels);
  assert.ok(hungUp.every((channel) => channel.endsWith(";2")));
  // Finish the call so later tests see no live call.
  const events = scenarioEvents("inbound-ivr-queue", third);
  const from = events.findIndex((event) => event.event === "QueueCallerJoin");
  for (const event of events.slice(from + 1)) tracking.feed(event);
  await tracking.idle();
  expectError(await app.request("POST", path, { headers: key(acme) }), 404, "Call not found");
});

test("the routes are in the OpenAPI document under Call Management", async () => {
  const doc = (await app.request("GET", "/api-spec.json")).body;
  for (const path of ["/calls", "/calls/history", "/calls/count", "/calls/{linkedId}/journey"]) {
    assert.ok(doc.paths[path]?.get, `${path} missing`);
    assert.equal(doc.paths[path].get.tags, ["Call Management"]);
  }
  assert.equal(doc.paths["/calls/{linkedId}/hangup"].post["x-permission"], "calls.hangup");
});

test.run();
