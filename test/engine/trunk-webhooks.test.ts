// Trunk registrations in a real Asterisk 22 behind the running service: org A's trunk registers
// at a stand-in registrar that answers 200 OK, org B's at one that answers 403 Forbidden (both
// the stand-in carrier of test/engine/carrier.ts, on their own loopback addresses). Org A's
// receiver gets `trunk.registered`, org B's `trunk.failed`, each signed with its own secret and
// nothing of the other org. The engine's Registry events and its outbound registration list are
// recorded into fixtures/registrations/trunk-registrations.json (UPDATE_GOLDEN=1) for the fast suite.
import { readFile, writeFile } from "node:fs/promises";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { AmiMessage } from "../../src/engine/ami-connection.js";
import { LIST_OUTBOUND_REGISTRATIONS } from "../../src/engine/registration-events.js";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";
import { pbxSignature } from "../../src/webhooks/signature.js";
import { type Receiver, startReceiver } from "../webhooks/helpers.js";
import { FakeCarrier } from "./carrier.js";
import { type Service, startService } from "./service.js";

export const TRUNK_FIXTURE = new URL(
  "../../fixtures/registrations/trunk-registrations.json",
  import.meta.url,
).pathname;

const EVENTS = ["trunk.registered", "trunk.failed"];

interface Context {
  service: Service;
  receivers: Receiver[];
  registrars: FakeCarrier[];
  previousAllow: string | undefined;
}

const test = suite<Context>("trunk registration webhooks from a real engine");

test.before(async (context) => {
  context.previousAllow = process.env.PBX_WEBHOOK_ALLOW_PRIVATE;
  process.env.PBX_WEBHOOK_ALLOW_PRIVATE = "1";
  context.receivers = [];
  context.registrars = [];
  context.service = await startService({ PBX_WEBHOOK_ALLOW_PRIVATE: "1" });
});

test.after(async (context) => {
  await context.service?.stop();
  for (const receiver of context.receivers) await receiver.close();
  for (const registrar of context.registrars) await registrar.close();
  if (context.previousAllow === undefined) delete process.env.PBX_WEBHOOK_ALLOW_PRIVATE;
  else process.env.PBX_WEBHOOK_ALLOW_PRIVATE = context.previousAllow;
});

/** Anonymises a recorded event or list item: org ids, hosts, ports and times become stable. */
function stable(event: AmiMessage, names: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(event)) {
    if (typeof value !== "string" || key === "actionid") continue;
    let text = value;
    for (const [from, to] of names) text = text.split(from).join(to);
    out[key] = key === "timestamp" ? "1795600000.000000" : text;
  }
  return out;
}

test("a trunk's registration reaches its org's receiver only: registered at A, refused at B", async (context) => {
  const { service } = context;
  const orgA = await service.createOrg("Acme");
  const orgB = await service.createOrg("Beta");
  const receivers = [await startReceiver(), await startReceiver()] as const;
  context.receivers.push(...receivers);
  const secrets = ["whsec_trunk-a-secret-0123456789", "trunk-b-secret-0123456789"] as const;
  for (const [i, org] of [orgA, orgB].entries()) {
    await service.call("POST", "/webhooks", org, {
      url: receivers[i]!.url,
      events: EVENTS,
      secret: secrets[i],
    });
  }
  const hosts = ["127.0.0.3", "127.0.0.4"] as const;
  const ports = [await freeLoopbackPort(), await freeLoopbackPort()];
  const [accept, refuse] = [new FakeCarrier(), new FakeCarrier()];
  context.registrars.push(accept, refuse);
  refuse.registerAnswer = "403 Forbidden";
  await accept.listen(ports[0]!, hosts[0]);
  await refuse.listen(ports[1]!, hosts[1]);

  // Registry events as the engine sends them, kept for the fast suite.
  const connection = service.rig.running.calls.connection!;
  const registryEvents: AmiMessage[] = [];
  const stopRecording = connection.onEvent((event) => {
    if (String(event.event).toLowerCase() === "registry") registryEvents.push(event);
  });
  try {
    for (const [i, org] of [orgA, orgB].entries()) {
      await service.call("POST", "/trunks", org, {
        name: "carrier",
        host: hosts[i],
        port: ports[i],
        registration: true,
        username: "0801234567",
        password: "carrier-secret",
      });
    }
    await service.deploy();

    await receivers[0].waitFor(1, 20_000);
    await receivers[1].waitFor(1, 20_000);
    const [a, b] = receivers.map((r) => r.requests[0]!);
    for (const [i, request] of [a!, b!].entries()) {
      assert.is(
        request.headers["x-pbx-signature"],
        pbxSignature(request.body, secrets[i]!),
        "signed with the org's own secret",
      );
    }
    const bodyA = JSON.parse(a!.body);
    const bodyB = JSON.parse(b!.body);
    assert.is(bodyA.event, "trunk.registered");
    assert.is(bodyA.organization_id, orgA.id);
    assert.equal(
      { ...bodyA.data, at: "" },
      {
        trunk: "carrier",
        registration: `${orgA.prefix}trunk_carrier`,
        status: "Registered",
        previous_status: bodyA.data.previous_status,
        server_uri: `sip:${hosts[0]}:${ports[0]}`,
        client_uri: `sip:0801234567@${hosts[0]}:${ports[0]}`,
        at: "",
      },
    );
    assert.is(bodyB.event, "trunk.failed");
    assert.is(bodyB.organization_id, orgB.id);
    assert.is(bodyB.data.registration, `${orgB.prefix}trunk_carrier`);
    assert.is(bodyB.data.status, "Rejected");
    assert.ok(accept.registers.includes("0801234567"), "A's registrar got the REGISTER");
    assert.ok(refuse.registers.includes("0801234567"), "B's registrar got the REGISTER");

    // The engine's list, read now, for the fixture and to check the mapping's source.
    const items = await connection.listAction(
      { ...LIST_OUTBOUND_REGISTRATIONS.action },
      LIST_OUTBOUND_REGISTRATIONS.complete,
    );
    const details = items.filter(
      (item) => String(item.event).toLowerCase() === "outboundregistrationdetail",
    );
    assert.is(details.length, 2, JSON.stringify(items));
    const names = new Map([
      [orgA.id, "aaaaaaaa-0000-4000-8000-000000000001"],
      [orgB.id, "bbbbbbbb-0000-4000-8000-000000000002"],
      [`${hosts[0]}:${ports[0]}`, "127.0.0.3:5070"],
      [`${hosts[1]}:${ports[1]}`, "127.0.0.4:5070"],
    ]);
    const fixture = {
      note: "Recorded by test/engine/trunk-webhooks.test.ts from Asterisk 22: Registry events, then the PJSIPShowRegistrationsOutbound items. Org A's registrar answered 200 OK, org B's 403.",
      registry: registryEvents.map((event) => stable(event, names)),
      list: details
        .map((item) => stable(item, names))
        .sort((x, y) => (x.objectname! < y.objectname! ? -1 : 1)),
    };
    assert.ok(fixture.registry.length >= 2, "a Registry event for each registration");
    if (process.env.UPDATE_GOLDEN === "1") {
      await writeFile(TRUNK_FIXTURE, `${JSON.stringify(fixture, null, 2)}\n`);
    }
    const recorded = JSON.parse(await readFile(TRUNK_FIXTURE, "utf8"));
    assert.equal(
      recorded.list.map((item: Record<string, string>) => [item.objectname, item.status]),
      fixture.list.map((item) => [item.objectname, item.status]),
      "the engine lists its registrations as fixtures/registrations/trunk-registrations.json says; rerun with UPDATE_GOLDEN=1",
    );
  } finally {
    stopRecording();
  }

  // One delivery per change: the engine's retries and refreshes send nothing more.
  assert.equal(
    receivers[0].requests.map((r) => r.headers["x-pbx-event"]),
    ["trunk.registered"],
  );
  assert.equal(
    receivers[1].requests.map((r) => r.headers["x-pbx-event"]),
    ["trunk.failed"],
  );
});

test("the engine left no ERROR in its log but the refused registration's", (context) => {
  const problems = context.service.engine
    .problems()
    .filter((line) => !/403|Forbidden|rejected|failed to register|Registration/i.test(line));
  assert.equal(problems, []);
});

test.run();
