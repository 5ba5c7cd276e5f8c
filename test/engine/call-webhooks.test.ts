// Real calls through Asterisk 22 deliver their call webhooks, signed, to their own org's
// receiver only (the outbox written at ingest, the real dispatcher, real HTTP receivers), and a
// recorded call's file, written by MixMonitor into the monitor directory, streams for its org.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import { openCallRecording } from "../../src/domain/calls/call-recordings.js";
import { callHistory } from "../../src/domain/calls/calls.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";
import { createDispatcher, type WebhookDispatcher } from "../../src/webhooks/dispatcher.js";
import { createNodeHttpClient } from "../../src/webhooks/http-client.js";
import { pbxSignature } from "../../src/webhooks/signature.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { addWebhook, type Receiver, startReceiver, testContext } from "../webhooks/helpers.js";
import {
  MAIN_IVR,
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

const SECRETS: Record<string, string> = {
  [ORG_A]: "whsec_org-a-secret-0123456789",
  [ORG_B]: "org-b-secret-0123456789",
};
const EVENTS = ["call.initiated", "call.ringing", "call.answered", "call.ended", "call.failed"];

interface Context {
  engine: AsteriskInstance;
  carrier: FakeCarrier;
  store: Awaited<ReturnType<typeof freshStore>>;
  tracking: CallTracking;
  dispatcher: WebhookDispatcher;
  receivers: Record<string, Receiver>;
}

const test = suite<Context>("call webhooks and recordings from a real engine");

/** Org A's 101 places a call that is answered, recorded by the org's record step, and talks. */
function recordedCallDialplan(): string {
  return [
    `[pbxtest-from-${PREFIX_A}rec]`,
    `exten => _X.,1,Set(CHANNEL(accountcode)=${ORG_A})`,
    ` same => n,Gosub(${PREFIX_A}record,s,1)`,
    " same => n,Dial(Local/talk@pbxtest-talker,10)",
    " same => n,Hangup()",
    "[pbxtest-talker]",
    "exten => talk,1,Answer()",
    ` same => n,Playback(greetings/greeting_ivr_${MAIN_IVR})`,
    ` same => n,Playback(greetings/greeting_ivr_${MAIN_IVR})`,
    " same => n,Hangup()",
    "",
  ].join("\n");
}

test.before(async (context) => {
  const carrierPort = await freeLoopbackPort();
  context.carrier = new FakeCarrier();
  await context.carrier.listen(carrierPort, "0.0.0.0");
  context.engine = await boot(scenarioFiles(carrierPort), {
    etcFiles: { "extensions_test.conf": `${scenarioDialplan()}${recordedCallDialplan()}` },
    extensionsAppend: '#include "extensions_test.conf"',
  });
  await writeGreeting(context.engine);
  context.store = await freshStore();
  for (const org of SCENARIO_ORGS) {
    await insertOrg(context.store.db, org.id, org.id, org.context_prefix);
  }
  const ctx = testContext(context.store.db, () => new Date());
  context.receivers = {};
  for (const org of [ORG_A, ORG_B]) {
    const receiver = await startReceiver();
    context.receivers[org] = receiver;
    await addWebhook(ctx, receiver.url, { events: EVENTS, secret: SECRETS[org]! }, org);
  }
  context.dispatcher = createDispatcher({
    db: context.store.db,
    http: createNodeHttpClient({ allowPrivate: true }),
  });
  await context.dispatcher.start();
  context.tracking = startCallTracking({
    db: context.store.db,
    clock: () => new Date(),
    ami: {
      host: "127.0.0.1",
      port: context.engine.amiPort,
      username: context.engine.amiUsername,
      secret: context.engine.amiSecret,
    },
  });
  await until("the first CoreShowChannels resync", () => context.tracking.live.tracking);
});

test.after(async (context) => {
  await context.tracking?.stop();
  await context.dispatcher?.stop();
  for (const receiver of Object.values(context.receivers ?? {})) await receiver.close();
  await context.store?.close();
  await context.engine?.stop();
  await context.carrier?.close();
});

/** The deliveries `receiver` got, each checked against its org's secret. */
function signedEvents(receiver: Receiver, org: string) {
  return receiver.requests.map((request) => {
    assert.is(request.headers["x-pbx-signature"], pbxSignature(request.body, SECRETS[org]!));
    assert.is(request.headers["x-pbx-organization"], org);
    const body = JSON.parse(request.body) as { event: string; data: Record<string, unknown> };
    assert.is(request.headers["x-pbx-event"], body.event);
    return body;
  });
}

test("a recorded, answered call of org A: its lifecycle reaches org A's receiver only, signed; its recording streams", async (context) => {
  const { engine, tracking, receivers } = context;
  await channelsIdle(engine);
  const answer = await tracking.connection!.action({
    Action: "Originate",
    Async: "true",
    Channel: `Local/100@pbxtest-from-${PREFIX_A}rec`,
    Application: "Wait",
    Data: "5",
    CallerID: '"Alice" <101>',
  });
  assert.is(String(answer.response).toLowerCase(), "success");
  await channelsIdle(engine, 30_000);
  await tracking.idle();
  const ended = () => signedEvents(receivers[ORG_A]!, ORG_A).find((e) => e.event === "call.ended");
  const end = await until("org A's call.ended delivery", () => ended() ?? null);
  const events = signedEvents(receivers[ORG_A]!, ORG_A);
  const order = ["call.initiated", "call.ringing", "call.answered", "call.ended"];
  assert.equal(
    events.map((e) => e.event).sort((x, y) => order.indexOf(x) - order.indexOf(y)),
    order,
  );
  const linkedid = end.data.call_id as string;
  assert.ok(events.every((e) => e.data.call_id === linkedid));
  assert.is(end.data.answered, true);
  assert.is(receivers[ORG_B]!.requests.length, 0, "org B's receiver got nothing of org A's call");

  const history = await until("the call record with its recording", async () => {
    const found = await callHistory({ db: context.store.db, live: tracking.live }, ORG_A, {});
    const call = found.calls.find((c) => c.linkedid === linkedid);
    return call?.recording_file ? call : null;
  });
  assert.match(history.recording_file!, new RegExp(`^${ORG_A}/`));
  const file = await openCallRecording(
    { db: context.store.db, recordingsDir: engine.recordingsDir },
    ORG_A,
    linkedid,
  );
  const chunks: Buffer[] = [];
  for await (const chunk of file.handle.createReadStream()) chunks.push(chunk as Buffer);
  const wav = Buffer.concat(chunks);
  assert.is(wav.length, file.size);
  assert.is(wav.subarray(0, 4).toString("latin1"), "RIFF");
  assert.ok(wav.length > 44 + 1600, `the recording holds audio (${wav.length} bytes)`);
  try {
    await openCallRecording(
      { db: context.store.db, recordingsDir: engine.recordingsDir },
      ORG_B,
      linkedid,
    );
    assert.unreachable("org B opened org A's recording");
  } catch (error) {
    assert.is((error as Error).message, "Recording not found");
  }
});

test("a missed call of org B reaches org B's receiver, never org A's", async (context) => {
  const { engine, tracking, receivers } = context;
  await channelsIdle(engine);
  const before = receivers[ORG_A]!.requests.length;
  await SCENARIOS.find((s) => s.name === "missed-inbound")!.place(tracking.connection!);
  await channelsIdle(engine, 30_000);
  await tracking.idle();
  await until("org B's call.failed delivery", () =>
    signedEvents(receivers[ORG_B]!, ORG_B).some((e) => e.event === "call.failed"),
  );
  const b = signedEvents(receivers[ORG_B]!, ORG_B).map((e) => e.event);
  assert.ok(b.includes("call.initiated"), b.join(", "));
  assert.is(receivers[ORG_A]!.requests.length, before, "org A's receiver got nothing more");
});

test.run();
