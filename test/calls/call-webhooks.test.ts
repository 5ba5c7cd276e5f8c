// Call and queue webhooks from the recorded engine event sequences (fixtures/calls): each org's
// outbox gets its own call's lifecycle in order and nothing of the other org's calls (rule 3),
// and replaying the same events writes no second delivery.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import { callWebhooksOf, engineTime } from "../../src/domain/calls/call-webhooks.js";
import type { JourneyEvent } from "../../src/engine/call-events.js";
import { WEBHOOK_EVENTS } from "../../src/webhooks/events.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { addWebhook, testContext } from "../webhooks/helpers.js";
import { callFixtures, ORG_A, ORG_B } from "./fixture-events.js";
import { assertDocumented, outboxRows } from "./outbox-rows.js";

const fixtures = callFixtures();
const NOW = new Date("2026-11-25T08:00:00Z");
const CALL_AND_QUEUE = WEBHOOK_EVENTS.filter((e) => /^(call|queue)\./.test(e));

interface Context {
  store: Awaited<ReturnType<typeof freshStore>>;
  tracking: CallTracking;
}

const test = suite<Context>("call webhooks from recorded engine events");

test.before.each(async (context) => {
  context.store = await freshStore();
  for (const org of fixtures.values().next().value!.orgs) {
    await insertOrg(context.store.db, org.id, org.id, org.context_prefix);
  }
  const ctx = testContext(context.store.db, () => NOW);
  for (const org of [ORG_A, ORG_B]) {
    await addWebhook(ctx, `http://127.0.0.1:9/${org}`, { events: [...CALL_AND_QUEUE] }, org);
  }
  context.tracking = startCallTracking({ db: context.store.db, clock: () => NOW });
  await context.tracking.idle();
});

test.after.each(async ({ store, tracking }) => {
  await tracking.stop();
  await store.close();
});

async function replay(tracking: CallTracking, scenario: string): Promise<void> {
  for (const event of fixtures.get(scenario)!.events) tracking.feed(event);
  await tracking.idle();
}

const outbox = ({ store }: Context, org: string) => outboxRows(store.db, org);

const types = (rows: [string, unknown][]) => rows.map(([type]) => type);

test("inbound DID -> IVR -> queue, abandoned: org A's lifecycle in order, org B nothing", async (context) => {
  await replay(context.tracking, "inbound-ivr-queue");
  const a = await outbox(context, ORG_A);
  assert.equal(types(a), [
    "call.initiated",
    "call.answered",
    "queue.entered",
    "queue.abandoned",
    "call.ended",
  ]);
  const linkedid = String(fixtures.get("inbound-ivr-queue")!.events[0]!.linkedid);
  for (const [, data] of a) assert.is(data.call_id, linkedid);
  const [, entered] = a[2]!;
  assert.is(entered.queue, `org_${ORG_A}_q600`);
  assert.is(entered.from, "919812345678");
  const [, ended] = a[4]!;
  assert.is(ended.answered, true);
  assert.is(ended.hangup_cause, 16);
  assert.equal(await outbox(context, ORG_B), []);
});

test("missed inbound of org B fails (unavailable), only for org B", async (context) => {
  await replay(context.tracking, "missed-inbound");
  const b = await outbox(context, ORG_B);
  assert.equal(types(b), ["call.initiated", "call.failed"]);
  assert.is(b[1]![1].answered, false);
  assert.is(b[1]![1].hangup_cause, 3);
  assert.equal(await outbox(context, ORG_A), []);
});

test("outbound to a busy carrier: rings, then fails busy once all org channels are gone", async (context) => {
  await replay(context.tracking, "outbound-busy");
  const a = await outbox(context, ORG_A);
  assert.equal(types(a), ["call.initiated", "call.ringing", "call.failed"]);
  assert.is(a[2]![1].hangup_cause, 17);
  assert.equal(await outbox(context, ORG_B), []);
});

test("a replayed sequence (reconnect, restart) writes no second delivery", async (context) => {
  for (const scenario of ["inbound-ivr-queue", "missed-inbound", "internal", "outbound-busy"]) {
    await replay(context.tracking, scenario);
  }
  assertDocumented([...(await outbox(context, ORG_A)), ...(await outbox(context, ORG_B))]);
  const before = [(await outbox(context, ORG_A)).length, (await outbox(context, ORG_B)).length];
  assert.ok(before[0]! > 0 && before[1]! > 0);
  for (const scenario of ["inbound-ivr-queue", "missed-inbound", "internal", "outbound-busy"]) {
    await replay(context.tracking, scenario);
  }
  assert.equal(
    [(await outbox(context, ORG_A)).length, (await outbox(context, ORG_B)).length],
    before,
  );
});

test("an org with no subscription gets no delivery rows", async (context) => {
  await context.store.db
    .updateTable("webhooks" as never)
    .set({ events: JSON.stringify(["crm.lead.created"]) } as never)
    .where("org_id" as never, "=", ORG_A as never)
    .execute();
  await replay(context.tracking, "inbound-ivr-queue");
  assert.equal(await outbox(context, ORG_A), []);
});

const step = (over: Partial<JourneyEvent>): JourneyEvent => ({
  uniqueid: "1.1",
  linkedid: "1.1",
  channel: "PJSIP/org_x_101-0001",
  state: "Ring",
  callerIdNum: "101",
  callerIdName: "",
  connectedLineNum: "",
  accountcode: "x",
  context: "org_x_internal",
  exten: "102",
  event: "Newchannel",
  timestamp: "1795594296.500000",
  detail: {},
  ...over,
});

test("rules: ended needs every channel of the org gone; answered only once", () => {
  const prior = [
    { uniqueid: "1.1", event: "Newchannel", state: "Ring" },
    { uniqueid: "1.2", event: "Newchannel", state: "Down" },
    { uniqueid: "1.2", event: "Newstate", state: "Up" },
  ];
  const first = callWebhooksOf(
    step({ event: "Hangup", state: "Up", detail: { cause: "16" } }),
    prior,
  );
  assert.equal(
    first.map((w) => w.type),
    [],
  );
  const last = callWebhooksOf(
    step({ uniqueid: "1.2", event: "Hangup", state: "Up", detail: { cause: "16" } }),
    [...prior, { uniqueid: "1.1", event: "Hangup", state: "Up" }],
  );
  assert.equal(
    last.map((w) => w.type),
    ["call.ended"],
  );
  assert.is(engineTime("1795594296.500000"), "2026-11-25T08:11:36.500Z");
  assert.equal(
    callWebhooksOf(step({ event: "Newstate", state: "Up" }), prior).map((w) => w.type),
    [],
  );
});

test.run();
