// Calls the API places or changes, ingested from what a real Asterisk 22 sent for them
// (fixtures/calls/click-to-call.json, ai-originate.json, transfer.json, recorded by
// `npm run record:call-fixtures` with the very Originate / BlindTransfer the API sends and real
// phones): each is one call of org A, with its journey, live while up and not after, and its
// webhooks in org A's outbox only. Org B, provisioned beside it, sees none of it (SPEC §1
// rule 3: the past defect matched every org's AI-outbound calls).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import { callCounts, callHistory, callJourney } from "../../src/domain/calls/calls.js";
import { WEBHOOK_EVENTS } from "../../src/webhooks/events.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { addWebhook, testContext } from "../webhooks/helpers.js";
import { callFixtures, cdrEvents, ORG_A, ORG_B } from "./fixture-events.js";
import { assertDocumented, outboxRows } from "./outbox-rows.js";

const fixtures = callFixtures();
const NOW = new Date("2026-11-25T08:00:00Z");
const PREFIX_A = `org_${ORG_A}_`;

interface Context {
  store: Awaited<ReturnType<typeof freshStore>>;
  tracking: CallTracking;
}

const test = suite<Context>("calls the API places, from recorded engine events");

test.before.each(async (context) => {
  context.store = await freshStore();
  for (const org of fixtures.get("click-to-call")!.orgs) {
    await insertOrg(context.store.db, org.id, org.id, org.context_prefix);
  }
  const ctx = testContext(context.store.db, () => NOW);
  const events = WEBHOOK_EVENTS.filter((e) => /^(call|queue)\./.test(e));
  for (const org of [ORG_A, ORG_B]) {
    await addWebhook(ctx, `http://127.0.0.1:9/${org}`, { events }, org);
  }
  context.tracking = startCallTracking({ db: context.store.db, clock: () => NOW });
  await context.tracking.idle();
  context.tracking.live.resync([]);
});

test.after.each(async ({ store, tracking }) => {
  await tracking.stop();
  await store.close();
});

const deps = ({ store, tracking }: Context) => ({ db: store.db, live: tracking.live });

/** Replays `scenario`; `during` runs once the event matching `at` has been fed. */
async function replay(
  context: Context,
  scenario: string,
  at?: (event: Record<string, unknown>) => boolean,
  during?: () => Promise<void> | void,
) {
  const fixture = fixtures.get(scenario);
  assert.ok(fixture, `fixtures/calls/${scenario}.json is missing: npm run record:call-fixtures`);
  let done = false;
  for (const event of fixture!.events) {
    context.tracking.feed(event);
    if (!done && at?.(event)) {
      done = true;
      await context.tracking.idle();
      await during?.();
    }
  }
  assert.ok(!at || done, "the moment to look at the live call is in the fixture");
  await context.tracking.idle();
}

/** Org B has nothing of org A's call anywhere: history, count, journey, live, outbox. */
async function orgBSeesNothing(context: Context, linkedid: string) {
  assert.is((await callHistory(deps(context), ORG_B, {})).total, 0);
  const count = await callCounts(deps(context), ORG_B, {});
  assert.is(count.total, 0);
  assert.is(count.active, 0);
  await callJourney(deps(context), ORG_B, linkedid).then(
    () => assert.unreachable("org B read org A's journey"),
    (error: Error) => assert.is(error.message, "Call not found"),
  );
  assert.equal(context.tracking.live.callsOf(ORG_B), []);
  assert.equal(await outboxRows(context.store.db, ORG_B), []);
}

const types = (rows: [string, unknown][]) => rows.map(([type]) => type);

test("click-to-call: the user's leg rings and answers, then the number is dialled out", async (context) => {
  const firstDial = (e: Record<string, unknown>) =>
    e.event === "DialBegin" && String(e.destchannel ?? "").includes("trunk_carrier");
  await replay(context, "click-to-call", firstDial, () => {
    const live = context.tracking.live.callsOf(ORG_A);
    assert.is(live.length, 1, "live while the number is being dialled");
    assert.ok(live[0]!.channels.some((c) => c.channel.startsWith(`PJSIP/${PREFIX_A}103-`)));
  });
  assert.equal(context.tracking.live.callsOf(ORG_A), [], "not live once hung up");
  const history = await callHistory(deps(context), ORG_A, {});
  assert.is(history.total, 1);
  const [call] = history.calls;
  // The API's Originate names the call: its ChannelId is the linkedid the API answered.
  assert.match(call!.linkedid, /^pbx-/);
  assert.is(call!.direction, "outbound");
  assert.is(call!.dst, "919812345678");
  assert.is(call!.disposition, "ANSWERED", "the user's phone answered");
  assert.ok(call!.channel.startsWith(`Local/103@${PREFIX_A}internal-`));
  const journey = await callJourney(deps(context), ORG_A, call!.linkedid);
  const names = journey.events.map((e) => e.event);
  // The user's phone rang first, then the carrier was dialled.
  const phoneUp = journey.events.findIndex(
    (e) => e.event === "BridgeEnter" && e.channel.startsWith(`PJSIP/${PREFIX_A}103-`),
  );
  const carrier = journey.events.findIndex((e) => e.channel.includes("trunk_carrier"));
  assert.ok(phoneUp >= 0 && carrier > phoneUp, names.join(", "));
  assert.is(journey.legs.length, cdrEvents(fixtures.get("click-to-call")!.events).length);
  const rows = await outboxRows(context.store.db, ORG_A);
  assert.equal(types(rows), ["call.initiated", "call.ringing", "call.answered", "call.ended"]);
  assert.ok(rows.every(([, data]) => data.call_id === call!.linkedid));
  assertDocumented(rows);
  await orgBSeesNothing(context, call!.linkedid);
});

test("AI originate: the number is dialled first; busy, so the call fails for org A only", async (context) => {
  await replay(context, "ai-originate");
  const history = await callHistory(deps(context), ORG_A, {});
  assert.is(history.total, 1);
  const [call] = history.calls;
  assert.match(call!.linkedid, /^pbx-/);
  assert.is(call!.direction, "outbound");
  assert.is(call!.dst, "919812345679");
  assert.is(call!.disposition, "BUSY");
  assert.ok(call!.channel.startsWith(`Local/919812345679@${PREFIX_A}outbound-`));
  // Every record of it is org A's: the account code the Originate set, not a wider match.
  const records = await context.store.db.selectFrom("call_records").selectAll().execute();
  assert.ok(records.length > 0);
  assert.ok(records.every((r) => r.org_id === ORG_A));
  const count = await callCounts(deps(context), ORG_A, {});
  assert.equal([count.total, count.outbound, count.answered], [1, 1, 0]);
  const rows = await outboxRows(context.store.db, ORG_A);
  assert.equal(types(rows), ["call.initiated", "call.ringing", "call.failed"]);
  assert.is(rows[2]![1].hangup_cause, 17, "busy");
  assertDocumented(rows);
  await orgBSeesNothing(context, call!.linkedid);
});

test("blind transfer: 103's call to 104 moves on to a number; one call, 104's leg ends first", async (context) => {
  const transferred = (e: Record<string, unknown>) => e.event === "BlindTransfer";
  await replay(context, "transfer", transferred, () => {
    const live = context.tracking.live.callsOf(ORG_A);
    assert.is(live.length, 1);
    assert.ok(live[0]!.channels.some((c) => c.channel.startsWith(`PJSIP/${PREFIX_A}103-`)));
  });
  assert.equal(context.tracking.live.callsOf(ORG_A), []);
  const history = await callHistory(deps(context), ORG_A, {});
  assert.is(history.total, 1, "the transferred leg stays in the same call (linkedid)");
  const [call] = history.calls;
  assert.is(call!.src, "103");
  assert.is(call!.dst, "104");
  assert.is(call!.direction, "outbound", "a leg left through the outbound route");
  const journey = await callJourney(deps(context), ORG_A, call!.linkedid);
  const hangup104 = journey.events.findIndex(
    (e) => e.event === "Hangup" && e.channel.startsWith(`PJSIP/${PREFIX_A}104-`),
  );
  const dialOut = journey.events.findIndex(
    (e) => e.event === "DialBegin" && e.channel.startsWith(`PJSIP/${PREFIX_A}103-`),
  );
  const secondDial = journey.events.findIndex(
    (e, i) =>
      i > dialOut && e.event === "DialBegin" && e.channel.startsWith(`PJSIP/${PREFIX_A}103-`),
  );
  assert.ok(hangup104 >= 0 && secondDial > hangup104, "104 left, then 103 was dialled out");
  const rows = await outboxRows(context.store.db, ORG_A);
  assert.equal(types(rows), ["call.initiated", "call.ringing", "call.answered", "call.ended"]);
  assertDocumented(rows);
  await orgBSeesNothing(context, call!.linkedid);
});

test.run();
