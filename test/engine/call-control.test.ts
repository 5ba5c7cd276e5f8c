// Calls the API places and changes, against pbxctl as an operator runs it (store, API, deployer
// and call tracking over AMI) in front of a real Asterisk 22, with Debian's baresip as the users'
// phones and a fake UDP carrier behind the org's trunk. Proves: click-to-call really rings the
// user (its Local channel is in `core show channels`) and, once answered, dials out with the
// caller ID of SPEC §4.5 (the carrier's INVITE From); AI originate dials out with the AI agent's
// caller ID; a blind transfer through the API moves the phone's peer (the carrier gets the
// transferred leg); another org is refused; and a call over the org's concurrent-call limit
// hears the busy prompt while the limit's call is up (§8).
import { readFile, writeFile } from "node:fs/promises";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type ActionAnswer, CALL_CONTROL_FILE } from "../../src/engine/testing/ami-transcript.js";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";
import { insertDid, insertUser, sipUser } from "../integration/helpers.js";
import { type Baresip, startBaresip } from "./baresip.js";
import { FakeCarrier } from "./carrier.js";
import { type Service, startService } from "./service.js";
import { calls, channelsIdle, steps } from "./trace.js";

/** Not the phones' address: the trunk identifies its traffic by host. */
const CARRIER_HOST = "127.0.0.2";

type Org = Awaited<ReturnType<Service["createOrg"]>>;

interface Context {
  service: Service;
  carrier: FakeCarrier;
  acme: Org;
  bravo: Org;
  limited: Org;
  restoreAction?: () => void;
}

/** Successful answers to the hold/unhold actions, captured during the hold test. */
const holdAnswers: ActionAnswer[] = [];

const test = suite<Context>("call control");

/** Polls `probe` until it answers something truthy (the engine's state, not a clock). */
async function until<T>(
  what: string,
  probe: () => Promise<T | null | false> | T | null | false,
  lastSeen: () => Promise<string> | string = () => "",
) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== false) return value;
    // Say what was seen last, so a failure here tells why rather than only that.
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; ${await lastSeen()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function phoneOf(context: Context, org: Org, extension: string): Promise<Baresip> {
  const phone = await startBaresip({
    user: `${org.prefix}${extension}`,
    password: `pw-${extension}`,
    registrar: `127.0.0.1:${context.service.engine.sipPort}`,
  });
  const registered = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
  assert.is(registered.type, "REGISTER_OK", JSON.stringify(registered));
  return phone;
}

/** Answers the next call the phone gets (from event index `since`). */
async function answer(phone: Baresip, since: number) {
  await phone.waitForEvent((e) => e.type === "CALL_INCOMING", { since });
  await phone.command("accept");
  await phone.waitForEvent((e) => e.type === "CALL_ESTABLISHED", { since });
}

async function outboundSetup(service: Service, org: Org, carrierPort: number, host: string) {
  await service.call("POST", "/trunks", org, {
    name: "carrier",
    host,
    port: carrierPort,
  });
  await service.call("POST", "/outbound-routes", org, {
    name: "Everything",
    patterns: ["_X."],
    trunk: "carrier",
  });
}

test.before(async (context) => {
  const carrierPort = await freeLoopbackPort();
  context.carrier = new FakeCarrier();
  await context.carrier.listen(carrierPort, "0.0.0.0");
  const service = await startService();
  context.service = service;
  const db = service.rig.db;
  context.acme = await service.createOrg("Acme");
  context.bravo = await service.createOrg("Bravo");
  context.limited = await service.createOrg("Limited");
  const { acme, bravo, limited } = context;
  await insertUser(db, acme.id, sipUser(acme.prefix, "101"));
  await insertUser(db, acme.id, sipUser(acme.prefix, "102"));
  // Fresh phones for the hold test: a stopped baresip leaves its contact registered, and a Dial
  // of the endpoint rings its first contact only.
  await insertUser(db, acme.id, sipUser(acme.prefix, "103"));
  await insertUser(db, acme.id, sipUser(acme.prefix, "104"));
  await insertUser(db, acme.id, { ...sipUser(acme.prefix, "150"), routing_type: "ai_agent" });
  // Rule 4: no default DID, so the first by number is the org's caller ID.
  await insertDid(db, acme.id, "+918065978002");
  await insertDid(db, acme.id, "+918065978001");
  await insertDid(db, bravo.id, "+918065978009");
  await insertUser(db, limited.id, sipUser(limited.prefix, "101"));
  await insertDid(db, limited.id, "+918065978020");
  // The limited org's DID rings its user 101.
  await db
    .updateTable("dids")
    .set({ routing_type: "extension", routing_destination: "101" })
    .where("number", "=", "+918065978020")
    .execute();
  // Each org reaches the carrier at its own loopback address (the carrier listens on all of
  // them): an address one org's trunk matches is that org's inbound traffic alone.
  await outboundSetup(service, acme, carrierPort, CARRIER_HOST);
  await outboundSetup(service, bravo, carrierPort, "127.0.0.3");
  await service.call("PUT", "/settings", limited, { max_concurrent_calls: 1 }, 200);
  await service.deploy();
  await until("call tracking connected", () => service.rig.running.calls.live.tracking);
});

test.after(async (context) => {
  await context.service?.stop();
  await context.carrier?.close();
});

test("click-to-call rings the user's phone, then the carrier gets the number with the org's caller ID", async (context) => {
  const { service, acme, carrier } = context;
  const { engine } = service;
  const phone = await phoneOf(context, acme, "101");
  try {
    await channelsIdle(engine);
    const since = engine.log().length;
    const mark = phone.events.length;
    const invites = carrier.invites.length;
    const placed = await service.call(
      "POST",
      "/calls/click-to-call",
      acme,
      { from: "101", to: "4155550100" },
      200,
    );
    assert.is(placed.caller_id, "+918065978001");
    // While the phone rings, the engine has the originated Local channel into the org's context.
    await phone.waitForEvent((e) => e.type === "CALL_INCOMING", { since: mark });
    const channels = await engine.cli("core show channels concise");
    assert.match(channels, new RegExp(`^Local/101@${acme.prefix}internal-[0-9a-f]+;1!`, "m"));
    await phone.command("accept");
    const invite = await carrier.invite(invites + 1);
    assert.is(invite.number, "4155550100");
    assert.is(invite.callerId, "+918065978001", "rule 4 as the dialplan applies it");
    const trace = steps(engine.log().slice(since));
    assert.ok(
      trace.some((s) => s.context === `${acme.prefix}outbound` && s.app === "Dial"),
      calls(trace).join("\n"),
    );
    await channelsIdle(engine);

    // Rule 1: the org's other DID, asked for in the request, is what the carrier sees.
    const mark2 = phone.events.length;
    await service.call(
      "POST",
      "/calls/click-to-call",
      acme,
      { from: "101", to: "4155550101", caller_id: "+91 8065978002" },
      200,
    );
    await answer(phone, mark2);
    const second = await carrier.invite(invites + 2);
    assert.is(second.number, "4155550101");
    assert.is(second.callerId, "+918065978002");
    await channelsIdle(engine);
  } finally {
    await phone.stop();
  }
});

test("another org's DID as caller_id is refused before anything reaches the engine", async (context) => {
  const { service, acme, carrier } = context;
  const invites = carrier.invites.length;
  const res = await service.rig.request("POST", "/api/v1/calls/click-to-call", {
    headers: acme.headers,
    body: { from: "101", to: "4155550100", caller_id: "+918065978009" },
  });
  assert.is(res.status, 403);
  assert.equal(res.body, { error: "caller_id_not_assigned" });
  assert.not.match(await service.engine.cli("core show channels concise"), "Local/101@");
  assert.is(carrier.invites.length, invites);
});

test("originate-to-ai dials the number out with the AI agent's caller ID", async (context) => {
  const { service, acme, carrier } = context;
  const { engine } = service;
  await channelsIdle(engine);
  const since = engine.log().length;
  const invites = carrier.invites.length;
  const placed = await service.call(
    "POST",
    "/calls/originate-to-ai",
    acme,
    { to: "4155550102" },
    200,
  );
  const invite = await carrier.invite(invites + 1);
  assert.is(invite.number, "4155550102");
  assert.is(invite.callerId, placed.caller_id);
  assert.is(invite.callerId, "+918065978001");
  // The originated Local channel ran the org's outbound route with the agent as the caller
  // (waited for: the carrier may get the INVITE before the engine's log line is read).
  const trace = steps(
    await engine.waitForLog(
      new RegExp(`Gosub\\("Local/4155550102@[^"]+", "${acme.prefix}caller,150,1`),
      {
        since,
      },
    ),
  );
  const route = trace.filter((s) =>
    s.channel.startsWith(`Local/4155550102@${acme.prefix}outbound-`),
  );
  assert.ok(
    calls(route).some((c) => c.startsWith(`Gosub(${acme.prefix}caller,150,1`)),
    calls(route).join("\n"),
  );
  await channelsIdle(engine);
});

test("a blind transfer through the API sends the phone's peer on; another org gets 404", async (context) => {
  const { service, acme, bravo, carrier } = context;
  const { engine } = service;
  const alice = await phoneOf(context, acme, "101");
  const bob = await phoneOf(context, acme, "102");
  try {
    await channelsIdle(engine);
    const mark = bob.events.length;
    await alice.command("dial", `sip:102@127.0.0.1:${engine.sipPort}`);
    await answer(bob, mark);
    let lastAnswer = "";
    const live = await until(
      "the live call in /calls",
      async () => {
        const res = await service.rig.request("GET", "/api/v1/calls", { headers: acme.headers });
        lastAnswer = res.text;
        const call = res.body.calls.find(
          (c: { live?: boolean; status?: string }) => c.live && c.status === "Up",
        );
        return call && call.channels.length >= 2 ? call : null;
      },
      async () =>
        `last /calls answer: ${lastAnswer}; engine: ${await engine.cli("core show channels concise")}`,
    );
    const path = `/api/v1/calls/${live.linkedid}/transfer`;
    const other = await service.rig.request("POST", path, {
      headers: bravo.headers,
      body: { to: "4155550103" },
    });
    assert.is(other.status, 404, other.text);
    const invites = carrier.invites.length;
    const since = engine.log().length;
    const done = await service.rig.request("POST", path, {
      headers: acme.headers,
      body: { to: "4155550103" },
    });
    assert.is(done.status, 200, done.text);
    const invite = await carrier.invite(invites + 1);
    assert.is(invite.number, "4155550103", "the transferred party was dialled out");
    const trace = steps(engine.log().slice(since));
    // The peer entered the org's internal context (which includes its outbound routes).
    assert.ok(
      trace.some(
        (s) =>
          s.context === `${acme.prefix}internal` &&
          s.exten === "4155550103" &&
          // Bob's own channel, not a new call: the peer itself was moved.
          s.channel.startsWith(`PJSIP/${acme.prefix}102-`) &&
          s.app === "Dial" &&
          s.args === `PJSIP/4155550103@${acme.prefix}trunk_carrier`,
      ),
      calls(trace).join("\n"),
    );
    await channelsIdle(engine);
  } finally {
    await alice.stop();
    await bob.stop();
  }
});

/** `core show channels concise` as {channel: [context, exten, state, app, bridgeId]}. */
async function channelTable(service: Service) {
  const text = await service.engine.cli("core show channels concise");
  const table = new Map<
    string,
    { context: string; exten: string; state: string; app: string; bridge: string }
  >();
  for (const line of text.split("\n")) {
    const f = line.split("!");
    if (f.length < 13) continue;
    table.set(f[0]!, { context: f[1]!, exten: f[2]!, state: f[4]!, app: f[5]!, bridge: f[12]! });
  }
  return { text, table };
}

test("hold through the API parks the phone and plays music to its peer; unhold bridges them again", async (context) => {
  const { service, acme, bravo } = context;
  const { engine } = service;
  const alice = await phoneOf(context, acme, "103");
  const bob = await phoneOf(context, acme, "104");
  try {
    await channelsIdle(engine);
    const mark = bob.events.length;
    await alice.command("dial", `sip:104@127.0.0.1:${engine.sipPort}`);
    await answer(bob, mark);
    const live = await until("the live call in /calls", async () => {
      const res = await service.rig.request("GET", "/api/v1/calls", { headers: acme.headers });
      const call = res.body.calls.find(
        (c: { live?: boolean; status?: string }) => c.live && c.status === "Up",
      );
      return call && call.channels.length >= 2 ? call : null;
    });
    const before = await until("both phones in one bridge", async () => {
      const { table } = await channelTable(service);
      const legs = [...table.entries()].filter(([name]) =>
        name.startsWith(`PJSIP/${acme.prefix}10`),
      );
      return legs.length === 2 &&
        legs[0]![1].bridge !== "" &&
        legs[0]![1].bridge === legs[1]![1].bridge
        ? legs
        : null;
    });
    const hold = `/api/v1/calls/${live.linkedid}/hold`;
    const unhold = `/api/v1/calls/${live.linkedid}/unhold`;
    const other = await service.rig.request("POST", hold, { headers: bravo.headers, body: {} });
    assert.is(other.status, 404, other.text);
    assert.is((await channelTable(service)).table.get(before[0]![0])!.bridge, before[0]![1].bridge);

    // The engine's answers to the hold/unhold actions, for the fast suite's fake AMI.
    const connection = service.rig.running.calls.connection!;
    const action = connection.action.bind(connection);
    connection.action = async (fields, ...rest) => {
      const reply = await action(fields, ...rest);
      if (["Getvar", "Setvar", "Redirect", "Bridge"].includes(String(fields.Action))) {
        const message = String(reply.message ?? "");
        if (
          String(reply.response) === "Success" &&
          !holdAnswers.some((a) => a.action === fields.Action)
        ) {
          holdAnswers.push({
            action: String(fields.Action),
            case: "ok",
            response: "Success",
            message,
          });
        }
      }
      return reply;
    };
    context.restoreAction = () => {
      connection.action = action;
    };
    const since = engine.log().length;
    const held = await service.rig.request("POST", hold, { headers: acme.headers, body: {} });
    assert.is(held.status, 200, held.text);
    const { channel: phone, held: peer } = held.body as { channel: string; held: string };
    assert.equal(
      new Set([phone, peer]),
      new Set(before.map(([name]) => name)),
      "the two phones of the call, one holding, one held",
    );
    // The held party hears music on hold (the org has none of its own: Asterisk's default).
    await engine.waitForLog(
      new RegExp(
        `Started music on hold, class 'default', on channel '${peer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}'`,
      ),
      { since },
    );
    const onHold = await until(
      "both legs in the holding context, out of any bridge",
      async () => {
        const { table } = await channelTable(service);
        const p = table.get(peer);
        const h = table.get(phone);
        return p?.app === "MusicOnHold" && h?.app === "Wait" ? { p, h } : null;
      },
      async () => (await channelTable(service)).text,
    );
    assert.is(onHold.p.context, `${acme.prefix}hold`);
    assert.is(onHold.p.exten, "s");
    assert.is(onHold.h.context, `${acme.prefix}hold`);
    assert.is(onHold.h.exten, "park");
    assert.is(onHold.p.bridge, "", "the held party is in no bridge");
    assert.is(onHold.h.bridge, "", "the phone is in no bridge");
    const again = await service.rig.request("POST", hold, { headers: acme.headers, body: {} });
    assert.is(again.status, 409, again.text);
    // The call is still the org's one live call (same linkedid) while on hold.
    const listed = await service.call("GET", "/calls", acme);
    assert.ok(
      listed.calls.some(
        (c: { linkedid: string; live?: boolean }) => c.linkedid === live.linkedid && c.live,
      ),
    );

    const otherUnhold = await service.rig.request("POST", unhold, {
      headers: bravo.headers,
      body: {},
    });
    assert.is(otherUnhold.status, 404, otherUnhold.text);
    const since2 = engine.log().length;
    const back = await service.rig.request("POST", unhold, { headers: acme.headers, body: {} });
    assert.is(back.status, 200, back.text);
    assert.equal(back.body, { success: true, channel: phone, held: peer });
    await engine.waitForLog(/Stopped music on hold/, { since: since2 });
    const rejoined = await until(
      "the two legs bridged together again",
      async () => {
        const { table } = await channelTable(service);
        const p = table.get(peer);
        const h = table.get(phone);
        return p && h && p.bridge !== "" && p.bridge === h.bridge ? { p, h } : null;
      },
      async () => (await channelTable(service)).text,
    );
    assert.is.not(rejoined.p.app, "MusicOnHold");
    // The audio path: the bridge holds exactly these two channels.
    const bridge = await engine.cli(`bridge show ${rejoined.p.bridge}`);
    assert.match(bridge, "Num-Channels: 2", bridge);
    assert.match(bridge, peer);
    assert.match(bridge, phone);
    const notHeld = await service.rig.request("POST", unhold, { headers: acme.headers, body: {} });
    assert.is(notHeld.status, 409, notHeld.text);
    // One side hanging up ends the other (it resumes at the holding context's Hangup).
    await alice.command("hangup");
    await channelsIdle(engine);
  } finally {
    context.restoreAction?.();
    await alice.stop();
    await bob.stop();
  }
});

test("a call over the org's concurrent-call limit hears the busy prompt while the first is up", async (context) => {
  const { service, limited } = context;
  const { engine } = service;
  const phone = await phoneOf(context, limited, "101");
  try {
    await channelsIdle(engine);
    const since = engine.log().length;
    const mark = phone.events.length;
    // Two callers through the DID, as the gateway would send them: the first is answered.
    await engine.cli(
      `channel originate Local/+918065978020@${limited.prefix}incoming application Wait 30`,
    );
    await answer(phone, mark);
    await engine.cli(
      `channel originate Local/+918065978020@${limited.prefix}incoming application Wait 30`,
    );
    const text = await engine.waitForLog(
      /Playback\("Local\/\+918065978020@[^"]+", "all-circuits-busy-now"\)/,
      {
        since,
      },
    );
    const trace = steps(text);
    const busy = trace.find((s) => s.app === "Playback" && s.args === "all-circuits-busy-now")!;
    const first = trace.find(
      (s) => s.app === "Dial" && s.args.startsWith(`PJSIP/${limited.prefix}101`),
    )!;
    assert.ok(first, calls(trace).join("\n"));
    assert.is.not(busy.channel, first.channel, "the second call, not the first, was refused");
    // The first call is still up: the phone's channel is in the engine's list.
    const channels = await engine.cli("core show channels concise");
    assert.match(channels, new RegExp(`^PJSIP/${limited.prefix}101-[0-9a-f]+!.*!Up!`, "m"));
    await phone.command("hangup");
    await channelsIdle(engine, 40_000);
  } finally {
    await phone.stop();
  }
});

test("the engine's answers to the call-control actions are those the fast suite's fake gives", async (context) => {
  const { service, acme, carrier } = context;
  const { engine } = service;
  const connection = service.rig.running.calls.connection!;
  await channelsIdle(engine);
  const invites = carrier.invites.length;
  const ask = async (which: string, fields: Record<string, string>) => {
    const answer = await connection.action(fields);
    // The channel's name (with this run's org id) stands as `{channel}`.
    const channel = fields.Channel ?? fields.Channel1 ?? "";
    return {
      action: fields.Action!,
      case: which,
      response: String(answer.response ?? ""),
      message: channel
        ? String(answer.message ?? "")
            .split(channel)
            .join("{channel}")
        : String(answer.message ?? ""),
    };
  };
  const answers: ActionAnswer[] = [
    await ask("queued", {
      Action: "Originate",
      Channel: `Local/4155550198@${acme.prefix}outbound`,
      Context: `${acme.prefix}internal`,
      Exten: "150",
      Priority: "1",
      Account: acme.id,
      Async: "true",
    }),
    // Refusals the API maps to documented errors (src/domain/calls/engine-refusals.ts): a route the
    // engine has not loaded, and a channel name it cannot dial.
    await ask("no such extension", {
      Action: "Originate",
      Channel: `Local/101@${acme.prefix}internal`,
      Context: `${acme.prefix}outbound`,
      Exten: "nosuchexten",
      Priority: "1",
      Account: acme.id,
      Async: "true",
    }),
    await ask("invalid channel", {
      Action: "Originate",
      Channel: "nochannel",
      Context: `${acme.prefix}internal`,
      Exten: "150",
      Priority: "1",
      Account: acme.id,
      Async: "true",
    }),
    await ask("no extension", {
      Action: "BlindTransfer",
      Channel: `PJSIP/${acme.prefix}101-7fffffff`,
      Context: `${acme.prefix}internal`,
      Exten: "",
    }),
    await ask("no such channel", {
      Action: "BlindTransfer",
      Channel: `PJSIP/${acme.prefix}101-7fffffff`,
      Context: `${acme.prefix}internal`,
      Exten: "102",
    }),
    await ask("no such channel", { Action: "Hangup", Channel: `PJSIP/${acme.prefix}101-7fffffff` }),
    await ask("no such channel", {
      Action: "Getvar",
      Channel: `PJSIP/${acme.prefix}101-7fffffff`,
      Variable: "BRIDGEPEER",
    }),
    await ask("no such channel", {
      Action: "Setvar",
      Channel: `PJSIP/${acme.prefix}101-7fffffff`,
      Variable: "PBX_HOLD_PEER",
      Value: "",
    }),
    await ask("no such channel", {
      Action: "Redirect",
      Channel: `PJSIP/${acme.prefix}101-7fffffff`,
      Context: `${acme.prefix}hold`,
      Exten: "s",
      Priority: "1",
      ExtraChannel: `PJSIP/${acme.prefix}102-7ffffffe`,
      ExtraContext: `${acme.prefix}hold`,
      ExtraExten: "park",
      ExtraPriority: "1",
    }),
    await ask("no such channel", {
      Action: "Bridge",
      Channel1: `PJSIP/${acme.prefix}101-7fffffff`,
      Channel2: `PJSIP/${acme.prefix}102-7ffffffe`,
      Tone: "no",
    }),
  ];
  // `org move` (issue 25): the source node tells each registered phone of the moved org to
  // re-register (NOTIFY `Event: check-sync`, sent through the phone's contact); an endpoint that
  // does not exist (deleted meanwhile) is refused by name.
  const phone = await phoneOf(context, acme, "101");
  try {
    answers.push(
      await ask("sent", {
        Action: "PJSIPNotify",
        Endpoint: `${acme.prefix}101`,
        Variable: "Event=check-sync",
      }),
    );
  } finally {
    await phone.stop();
  }
  answers.push(
    await ask("no such endpoint", {
      Action: "PJSIPNotify",
      Endpoint: `${acme.prefix}nosuch`,
      Variable: "Event=check-sync",
    }),
  );
  // The endpoint's name (with this run's prefix) stands as `{endpoint}`.
  for (const answer of answers.filter((a) => a.action === "PJSIPNotify")) {
    answer.message = answer.message.split(`${acme.prefix}nosuch`).join("{endpoint}");
  }
  assert.equal(
    holdAnswers.map((a) => a.action).sort(),
    ["Bridge", "Getvar", "Redirect", "Setvar"],
    "the hold test ran first and captured each action's answer",
  );
  answers.push(...holdAnswers);
  await carrier.invite(invites + 1);
  await channelsIdle(engine);
  if (process.env.UPDATE_GOLDEN === "1") {
    await writeFile(CALL_CONTROL_FILE, `${JSON.stringify({ answers }, null, 2)}\n`);
  }
  const expected = JSON.parse(await readFile(CALL_CONTROL_FILE, "utf8"));
  assert.equal(
    { answers },
    expected,
    "the engine answers differently from fixtures/ami/call-control.json; rerun with UPDATE_GOLDEN=1 and review the diff",
  );
});

test("the calls left no WARNING or ERROR in the engine's log", (context) => {
  assert.equal(context.service.engine.problems(), []);
});

test.run();
