// Real calls through Asterisk 22 become call records of the right org only, and live calls
// while their channels are up and not after; a fresh connection learns the calls already up
// from CoreShowChannels. The scenarios are those of fixtures/calls (test/engine/call-scenarios).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import { hangupCall } from "../../src/domain/calls/call-control.js";
import { callHistory, callJourney } from "../../src/domain/calls/calls.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";
import type { Db } from "../../src/store/database.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import {
  ORG_A,
  ORG_B,
  PREFIX_A,
  SCENARIO_ORGS,
  SCENARIOS,
  scenarioDialplan,
  scenarioFiles,
  writeGreeting,
} from "./call-scenarios.js";
import { FakeCarrier } from "./carrier.js";
import { boot, until } from "./helpers.js";
import { channelsIdle } from "./trace.js";

interface Context {
  engine: AsteriskInstance;
  carrier: FakeCarrier;
  store: Awaited<ReturnType<typeof freshStore>>;
  tracking: CallTracking;
}

const test = suite<Context>("call records from a real engine");

function follow(engine: AsteriskInstance, db: Db): CallTracking {
  return startCallTracking({
    db,
    clock: () => new Date(),
    ami: {
      host: "127.0.0.1",
      port: engine.amiPort,
      username: engine.amiUsername,
      secret: engine.amiSecret,
    },
  });
}

test.before(async (context) => {
  const carrierPort = await freeLoopbackPort();
  context.carrier = new FakeCarrier();
  await context.carrier.listen(carrierPort, "0.0.0.0");
  context.engine = await boot(scenarioFiles(carrierPort), {
    etcFiles: { "extensions_test.conf": scenarioDialplan() },
    extensionsAppend: '#include "extensions_test.conf"',
  });
  await writeGreeting(context.engine);
  context.store = await freshStore();
  for (const org of SCENARIO_ORGS) {
    await insertOrg(context.store.db, org.id, org.id, org.context_prefix);
  }
  context.tracking = follow(context.engine, context.store.db);
  await until("the first CoreShowChannels resync", () => context.tracking.live.tracking);
});

test.after(async (context) => {
  await context.tracking?.stop();
  await context.store?.close();
  await context.engine?.stop();
  await context.carrier?.close();
});

const scenario = (name: string) => SCENARIOS.find((s) => s.name === name)!;
const history = (context: Context, orgId: string) =>
  callHistory({ db: context.store.db, live: context.tracking.live }, orgId, {});

test("inbound DID -> IVR -> queue: live for org A only while up, then one record of org A", async (context) => {
  const { engine, tracking } = context;
  await channelsIdle(engine);
  await scenario("inbound-ivr-queue").place(tracking.connection!);
  const live = await until("org A's live call in the queue", () => {
    const calls = tracking.live.callsOf(ORG_A);
    return calls.some((call) => call.channels.some((c) => c.context === `${PREFIX_A}queue`))
      ? calls
      : null;
  });
  assert.is(live.length, 1);
  assert.equal(tracking.live.callsOf(ORG_B), [], "org B sees no live call");
  await channelsIdle(engine, 30_000);
  const stored = await until("org A's call record", async () => {
    const found = await history(context, ORG_A);
    return found.total > 0 ? found : null;
  });
  assert.equal(tracking.live.callsOf(ORG_A), [], "not live after the hangup");
  assert.is(stored.total, 1);
  assert.is(stored.calls[0]!.linkedid, live[0]!.linkedid);
  assert.is(stored.calls[0]!.direction, "inbound");
  assert.is(stored.calls[0]!.dst, "600");
  assert.is((await history(context, ORG_B)).total, 0);
  const journey = await callJourney(
    { db: context.store.db, live: tracking.live },
    ORG_A,
    stored.calls[0]!.linkedid,
  );
  const steps = journey.events.map((step) => step.event);
  assert.ok(steps.includes("QueueCallerJoin"), steps.join(", "));
  assert.is(steps.at(-1), "Hangup");
});

test("a missed call of org B is org B's record and never org A's", async (context) => {
  const { engine, tracking } = context;
  await channelsIdle(engine);
  const before = (await history(context, ORG_A)).total;
  await scenario("missed-inbound").place(tracking.connection!);
  await channelsIdle(engine, 30_000);
  const b = await until("org B's call record", async () => {
    const found = await history(context, ORG_B);
    return found.total > 0 ? found : null;
  });
  assert.is(b.total, 1);
  assert.is(b.calls[0]!.direction, "inbound");
  assert.not.equal(b.calls[0]!.disposition, "ANSWERED");
  await tracking.idle();
  assert.is((await history(context, ORG_A)).total, before, "org A got nothing");
});

test("an outbound call of org A is recorded outbound with the carrier's answer", async (context) => {
  const { engine, tracking } = context;
  await channelsIdle(engine);
  await scenario("outbound-busy").place(tracking.connection!);
  await context.carrier.invite(1);
  await channelsIdle(engine, 30_000);
  const outbound = await until("org A's outbound record", async () => {
    const found = await callHistory({ db: context.store.db, live: tracking.live }, ORG_A, {
      direction: "outbound",
    });
    return found.total > 0 && found.calls[0]!.legs >= 2 ? found : null;
  });
  assert.is(outbound.calls[0]!.disposition, "BUSY");
  assert.is(outbound.calls[0]!.dst, "919812345678");
});

test("a new connection learns the calls already up from CoreShowChannels; hangup through the org's live call ends it", async (context) => {
  const { engine, tracking, store } = context;
  await channelsIdle(engine);
  // A caller waiting in org A's queue (nobody answers) until the test hangs up.
  const answer = await tracking.connection!.action({
    Action: "Originate",
    Async: "true",
    Channel: `Local/600@${PREFIX_A}queue`,
    Application: "Wait",
    Data: "30",
  });
  assert.is(String(answer.response).toLowerCase(), "success");
  await until("the call in the queue", () =>
    tracking.live.callsOf(ORG_A).some((c) => c.channels.some((ch) => ch.exten === "600")),
  );
  const late = follow(engine, store.db);
  try {
    await until("the second connection's resync", () => late.live.tracking);
    const seen = late.live.callsOf(ORG_A);
    assert.is(seen.length, 1, "the resync lists the call that was already up");
    assert.equal(late.live.callsOf(ORG_B), []);
    const linkedid = seen[0]!.linkedid;
    const control = { live: tracking.live, control: tracking.control };
    try {
      await hangupCall(control, ORG_B, linkedid);
      assert.unreachable("org B hung up org A's call");
    } catch (error) {
      assert.is((error as Error).message, "Call not found");
    }
    const done = await hangupCall(control, ORG_A, linkedid);
    assert.ok(done.channels.length > 0);
    await channelsIdle(engine);
    await until(
      "the hangup seen by both",
      () => late.live.callsOf(ORG_A).length === 0 && tracking.live.callsOf(ORG_A).length === 0,
    );
  } finally {
    await late.stop();
  }
});

test.run();
