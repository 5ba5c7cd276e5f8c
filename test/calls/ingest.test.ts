// Call ingest from real AMI event sequences (fixtures/calls, recorded from Asterisk 22): one call
// per linkedid, the org of SPEC.md §1 rule 3 and no other, idempotent replays, live calls while
// the channels are up and not after.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import { callHistory, callJourney } from "../../src/domain/calls/calls.js";
import type { Db } from "../../src/store/database.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { callFixtures, cdrEvents, ORG_A, ORG_B } from "./fixture-events.js";

const fixtures = callFixtures();
const NOW = new Date("2026-11-25T08:00:00Z");

interface Context {
  store: Awaited<ReturnType<typeof freshStore>>;
  tracking: CallTracking;
}

const test = suite<Context>("call ingest from recorded engine events");

test.before.each(async (context) => {
  context.store = await freshStore();
  const some = fixtures.values().next().value!;
  for (const org of some.orgs) {
    await insertOrg(context.store.db, org.id, org.id, org.context_prefix);
  }
  context.tracking = startCallTracking({ db: context.store.db, clock: () => NOW });
  await context.tracking.idle();
});

test.after.each(async ({ store, tracking }) => {
  await tracking.stop();
  await store.close();
});

async function replay(tracking: CallTracking, scenario: string): Promise<void> {
  const fixture = fixtures.get(scenario);
  assert.ok(fixture, `no fixture ${scenario}`);
  for (const event of fixture!.events) tracking.feed(event);
  await tracking.idle();
}

const deps = (tracking: CallTracking, db: Db) => ({ db, live: tracking.live });

test("the fixtures hold every scenario the suite relies on, each with call records", () => {
  for (const name of [
    "inbound-ivr-queue",
    "missed-inbound",
    "internal",
    "outbound-busy",
    "click-to-call",
    "ai-originate",
    "transfer",
  ]) {
    const fixture = fixtures.get(name);
    assert.ok(fixture, `fixtures/calls/${name}.json is missing: npm run record:call-fixtures`);
    assert.ok(cdrEvents(fixture!.events).length > 0, `${name} has no Cdr event`);
  }
});

test("inbound DID -> IVR -> queue: one call of org A, inbound, through the queue", async ({
  store,
  tracking,
}) => {
  await replay(tracking, "inbound-ivr-queue");
  const history = await callHistory(deps(tracking, store.db), ORG_A, {});
  assert.is(history.total, 1);
  const [call] = history.calls;
  assert.is(call!.direction, "inbound");
  assert.is(call!.disposition, "ANSWERED", "the IVR answered");
  assert.is(call!.src, "919812345678");
  assert.is(call!.dst, "600", "the queue is where the org's leg ended");
  const linkedid = cdrEvents(fixtures.get("inbound-ivr-queue")!.events)[0]!.linkedid as string;
  assert.is(call!.linkedid, linkedid);
  // The carrier's leg (no accountcode, no org prefix in its channel) belongs to no org.
  const records = await store.db.selectFrom("call_records").selectAll().execute();
  assert.is(records.length, 2);
  assert.equal(records.map((r) => r.org_id).sort(), [ORG_A, null].sort());
  const journey = await callJourney(deps(tracking, store.db), ORG_A, linkedid);
  assert.equal(
    journey.legs.map((leg) => leg.lastapp),
    ["Queue"],
    "the journey lists the org's legs only",
  );
  assert.is((await callHistory(deps(tracking, store.db), ORG_B, {})).total, 0);
});

test("the journey: the org's own steps in the engine's time order, each stored once", async ({
  store,
  tracking,
}) => {
  await replay(tracking, "inbound-ivr-queue");
  await replay(tracking, "inbound-ivr-queue");
  const linkedid = cdrEvents(fixtures.get("inbound-ivr-queue")!.events)[0]!.linkedid as string;
  const journey = await callJourney(deps(tracking, store.db), ORG_A, linkedid);
  const names = journey.events.map((step) => step.event);
  // The org's leg (;2) from the moment its DID entry set the accountcode; the caller's own
  // half (;1, no org marker) is not the org's.
  assert.ok(journey.events.every((step) => step.channel.endsWith(";2")));
  for (const expected of ["Newstate", "QueueCallerJoin", "QueueCallerAbandon", "Hangup"]) {
    assert.ok(names.includes(expected), `${expected} missing from ${names.join(", ")}`);
  }
  assert.ok(names.indexOf("QueueCallerJoin") < names.indexOf("QueueCallerAbandon"));
  assert.is(names.at(-1), "Hangup");
  const times = journey.events.map((step) => step.timestamp);
  assert.equal(
    times,
    [...times].sort((a, b) => Number(a) - Number(b)),
  );
  assert.is(new Set(times.map((t, i) => `${t}/${names[i]}`)).size, times.length, "no duplicates");
  const join = journey.events.find((step) => step.event === "QueueCallerJoin")!;
  assert.is(join.detail.queue, `org_${ORG_A}_q600`);
  const hangup = journey.events.at(-1)!;
  assert.type(hangup.detail.cause, "string");
});

test("a missed inbound call of org B is org B's, unanswered, and invisible to org A", async ({
  store,
  tracking,
}) => {
  await replay(tracking, "missed-inbound");
  const b = await callHistory(deps(tracking, store.db), ORG_B, {});
  assert.is(b.total, 1);
  assert.is(b.calls[0]!.direction, "inbound");
  assert.is(b.calls[0]!.disposition, "FAILED");
  assert.match(b.calls[0]!.recording_file ?? "", new RegExp(`^${ORG_B}/[0-9.]+\\.wav$`));
  assert.is((await callHistory(deps(tracking, store.db), ORG_A, {})).total, 0);
  try {
    await callJourney(deps(tracking, store.db), ORG_A, b.calls[0]!.linkedid);
    assert.unreachable("org A read org B's journey");
  } catch (error) {
    assert.is((error as Error).message, "Call not found");
  }
});

test("an internal call and an outbound call of org A get their directions", async ({
  store,
  tracking,
}) => {
  await replay(tracking, "internal");
  await replay(tracking, "outbound-busy");
  const history = await callHistory(deps(tracking, store.db), ORG_A, {});
  assert.is(history.total, 2);
  const byDirection = Object.fromEntries(history.calls.map((c) => [c.direction, c]));
  assert.is(byDirection.internal?.dst, "102");
  assert.is(byDirection.outbound?.dst, "919812345678");
  assert.is(byDirection.outbound?.disposition, "BUSY");
  // Three records of the outbound call, folded into one call.
  assert.is(byDirection.outbound?.legs, 3);
  const outbound = await callHistory(deps(tracking, store.db), ORG_A, { direction: "outbound" });
  assert.equal(
    outbound.calls.map((c) => c.linkedid),
    [byDirection.outbound!.linkedid],
  );
});

test("replaying every event again stores nothing new and changes no call", async ({
  store,
  tracking,
}) => {
  for (const name of fixtures.keys()) await replay(tracking, name);
  const records = await store.db.selectFrom("call_records").select("id").execute();
  const calls = await store.db.selectFrom("calls").selectAll().orderBy("linkedid").execute();
  for (const name of fixtures.keys()) await replay(tracking, name);
  assert.is(
    (await store.db.selectFrom("call_records").select("id").execute()).length,
    records.length,
  );
  assert.equal(await store.db.selectFrom("calls").selectAll().orderBy("linkedid").execute(), calls);
  // One call per org and linkedid.
  const linked = calls.map((c) => `${c.org_id}/${c.linkedid}`);
  assert.is(new Set(linked).size, linked.length);
});

test("records folded in reverse order give the same call", async ({ store, tracking }) => {
  const events = cdrEvents(fixtures.get("outbound-busy")!.events);
  for (const event of events) tracking.feed(event);
  await tracking.idle();
  const forward = await store.db.selectFrom("calls").selectAll().execute();
  await store.db.deleteFrom("calls").execute();
  await store.db.deleteFrom("call_records").execute();
  for (const event of [...events].reverse()) tracking.feed(event);
  await tracking.idle();
  assert.equal(await store.db.selectFrom("calls").selectAll().execute(), forward);
});

test("live calls: the org's channels while they are up, nothing once they hung up", async ({
  tracking,
}) => {
  const events = fixtures.get("inbound-ivr-queue")!.events;
  const inQueue = events.findIndex((event) => event.event === "QueueCallerJoin");
  assert.ok(inQueue > 0);
  tracking.live.resync([]);
  for (const event of events.slice(0, inQueue + 1)) tracking.feed(event);
  const live = tracking.live.callsOf(ORG_A);
  assert.is(live.length, 1);
  assert.equal(
    live[0]!.channels.map((c) => [c.state, c.context]),
    [["Up", `org_${ORG_A}_queue`]],
    "only the org's own channel, in the queue",
  );
  assert.equal(tracking.live.callsOf(ORG_B), []);
  for (const event of events.slice(inQueue + 1)) tracking.feed(event);
  await tracking.idle();
  assert.equal(tracking.live.callsOf(ORG_A), []);
});

test.run();
