// Tenant isolation of calls through the whole service (store, API, call tracking over AMI) in
// front of a real Asterisk 22, two orgs provisioned side by side:
// - an AI-outbound call of org A (POST /calls/originate-to-ai, dialled out through its trunk to
//   the stand-in carrier) is in org A's /calls, /calls/history, /calls/count and journey, and
//   never in org B's (SPEC §1 rule 3: the past defect matched every org's AI-outbound calls);
// - a call between two real phones of org A is hung up through the API (org B's attempt is 404
//   and touches nothing), was recorded by its record step, and its recording downloads over HTTP (200 with Content-Length, a valid WAV; 206 for a Range), while org B gets
//   404 for it.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";
import { insertDid, insertUser, sipUser } from "../integration/helpers.js";
import { type Baresip, startBaresip } from "./baresip.js";
import { FakeCarrier } from "./carrier.js";
import { until } from "./helpers.js";
import { type Service, startService } from "./service.js";
import { channelsIdle } from "./trace.js";

const CARRIER_HOST = "127.0.0.2";

type Org = Awaited<ReturnType<Service["createOrg"]>>;

interface Context {
  service: Service;
  carrier: FakeCarrier;
  acme: Org;
  bravo: Org;
}

const test = suite<Context>("call isolation and recordings over HTTP");

async function phoneOf(service: Service, org: Org, extension: string): Promise<Baresip> {
  const phone = await startBaresip({
    user: `${org.prefix}${extension}`,
    password: `pw-${extension}`,
    registrar: `127.0.0.1:${service.engine.sipPort}`,
  });
  const registered = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
  assert.is(registered.type, "REGISTER_OK", JSON.stringify(registered));
  return phone;
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
  const { acme, bravo } = context;
  // Each org reaches the carrier at its own loopback address (the carrier listens on all of
  // them): an address one org's trunk matches is that org's inbound traffic alone.
  const hosts = new Map([
    [acme, CARRIER_HOST],
    [bravo, "127.0.0.3"],
  ]);
  for (const org of [acme, bravo]) {
    await insertUser(db, org.id, sipUser(org.prefix, "101"));
    await insertUser(db, org.id, sipUser(org.prefix, "102"));
    await insertUser(db, org.id, { ...sipUser(org.prefix, "150"), routing_type: "ai_agent" });
    await service.call("POST", "/trunks", org, {
      name: "carrier",
      host: hosts.get(org)!,
      port: carrierPort,
    });
    await service.call("POST", "/outbound-routes", org, {
      name: "Everything",
      patterns: ["_X."],
      trunk: "carrier",
    });
  }
  await insertDid(db, acme.id, "+918065978001");
  await insertDid(db, bravo.id, "+918065978009");
  await service.deploy();
  await until("call tracking connected", async () => service.rig.running.calls.live.tracking);
});

test.after(async (context) => {
  await context.service?.stop();
  await context.carrier?.close();
});

const get = (context: Context, org: Org, path: string) =>
  context.service.rig.request("GET", `/api/v1${path}`, { headers: org.headers });

test("an AI-outbound call of org A is org A's in every listing and never org B's", async (context) => {
  const { service, acme, bravo, carrier } = context;
  await channelsIdle(service.engine);
  const invites = carrier.invites.length;
  const placed = await service.call(
    "POST",
    "/calls/originate-to-ai",
    acme,
    { to: "4155550142" },
    200,
  );
  const invite = await carrier.invite(invites + 1);
  assert.is(invite.number, "4155550142");
  await channelsIdle(service.engine);
  const linkedid = placed.linkedid as string;
  const history = await until("org A's record of the AI call", async () => {
    const res = await get(context, acme, "/calls/history");
    return res.body.calls.find((c: { linkedid: string }) => c.linkedid === linkedid) ?? null;
  });
  assert.is(history.direction, "outbound");
  const listed = await get(context, acme, "/calls");
  assert.ok(listed.body.calls.some((c: { linkedid: string }) => c.linkedid === linkedid));
  const countA = await get(context, acme, "/calls/count");
  assert.ok(countA.body.total >= 1 && countA.body.outbound >= 1, JSON.stringify(countA.body));
  const journeyA = await get(context, acme, `/calls/${linkedid}/journey`);
  assert.is(journeyA.status, 200);
  assert.ok(journeyA.body.legs.length >= 1 && journeyA.body.events.length >= 1);

  // Org B, provisioned the same way (same agent extension, same trunk), sees nothing of it.
  for (const path of ["/calls", "/calls/history"]) {
    const res = await get(context, bravo, path);
    assert.is(res.status, 200);
    assert.equal(res.body.calls, [], `${path} of org B`);
    assert.is(res.body.total, 0);
  }
  const countB = await get(context, bravo, "/calls/count");
  assert.is(countB.body.total, 0);
  assert.is(countB.body.outbound, 0);
  const journeyB = await get(context, bravo, `/calls/${linkedid}/journey`);
  assert.is(journeyB.status, 404);
  assert.equal(journeyB.body, { error: "Call not found" });
  // Not even through a filter on the dialled number.
  const byNumber = await get(context, bravo, "/calls/history?number=4155550142");
  assert.equal(byNumber.body.calls, []);
});

test("a call of org A hung up through the API; its recording downloads over HTTP with Content-Length and ranges; org B gets 404", async (context) => {
  const { service, acme, bravo } = context;
  const alice = await phoneOf(service, acme, "101");
  const bob = await phoneOf(service, acme, "102");
  try {
    await channelsIdle(service.engine);
    const mark = bob.events.length;
    await alice.command("dial", `sip:102@127.0.0.1:${service.engine.sipPort}`);
    await bob.waitForEvent((e) => e.type === "CALL_INCOMING", { since: mark });
    await bob.command("accept");
    await bob.waitForEvent((e) => e.type === "CALL_ESTABLISHED", { since: mark });
    // Let the call carry some audio, then hang it up through the API (org B's try is refused).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const live = await until("the live call in /calls", async () => {
      const res = await get(context, acme, "/calls");
      const up = res.body.calls.find(
        (c: { live?: boolean; status?: string; channels?: unknown[] }) =>
          c.live && c.status === "Up" && (c.channels?.length ?? 0) >= 2,
      );
      return up ?? null;
    });
    const hangup = `/api/v1/calls/${live.linkedid}/hangup`;
    const refused = await service.rig.request("POST", hangup, { headers: bravo.headers });
    assert.is(refused.status, 404, refused.text);
    assert.match(
      await service.engine.cli("core show channels concise"),
      `PJSIP/${acme.prefix}102-`,
      "org B's hangup touched nothing",
    );
    const closedMark = bob.events.length;
    const done = await service.rig.request("POST", hangup, { headers: acme.headers });
    assert.is(done.status, 200, done.text);
    assert.ok(done.body.channels.length >= 2, done.text);
    await bob.waitForEvent((e) => e.type === "CALL_CLOSED", { since: closedMark });
    await channelsIdle(service.engine);
  } finally {
    await alice.stop();
    await bob.stop();
  }
  const call = await until("org A's recorded call", async () => {
    const res = await get(context, acme, "/calls/history?extension=102");
    return res.body.calls.find((c: { recording_file: string | null }) => c.recording_file) ?? null;
  });
  const url = `${service.rig.running.url}/api/v1/calls/${call.linkedid}/recording`;
  const whole = await fetch(url, { headers: acme.headers });
  assert.is(whole.status, 200);
  assert.is(whole.headers.get("content-type"), "audio/wav");
  const bytes = Buffer.from(await whole.arrayBuffer());
  const length = Number(whole.headers.get("content-length"));
  assert.ok(length > 44 + 1600, `a WAV with audio (${length} bytes)`);
  assert.is(bytes.length, length);
  assert.is(bytes.subarray(0, 4).toString("latin1"), "RIFF");
  assert.is(bytes.subarray(8, 12).toString("latin1"), "WAVE");
  assert.is(bytes.readUInt32LE(4), length - 8, "the RIFF size matches the file");

  const part = await fetch(url, { headers: { ...acme.headers, range: "bytes=0-11" } });
  assert.is(part.status, 206);
  assert.is(part.headers.get("content-range"), `bytes 0-11/${length}`);
  assert.is(part.headers.get("content-length"), "12");
  assert.equal(Buffer.from(await part.arrayBuffer()), bytes.subarray(0, 12));

  const other = await fetch(url, { headers: bravo.headers });
  assert.is(other.status, 404);
  assert.equal(await other.json(), { error: "Recording not found" });
});

test.run();
