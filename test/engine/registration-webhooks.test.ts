// A real phone (Debian's baresip) registering with a real Asterisk 22 behind the running service
// delivers `user.registered` to its own org's receiver only, and `user.unregistered` when it
// unregisters; the other org, with a user on the same extension, gets nothing.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type Receiver, startReceiver } from "../webhooks/helpers.js";
import { startBaresip } from "./baresip.js";
import { type Service, startService } from "./service.js";

const EVENTS = ["user.registered", "user.unregistered"];

interface Context {
  service: Service;
  receivers: Receiver[];
}

const test = suite<Context>("registration webhooks from a real engine");

test.before(async (context) => {
  // The receivers listen on loopback: the API and the dispatcher must both allow it.
  context.receivers = [];
  context.service = await startService({ PBX_WEBHOOK_ALLOW_PRIVATE: "1" });
});

test.after(async (context) => {
  await context.service?.stop();
  for (const receiver of context.receivers) await receiver.close();
});

test("a phone's registration reaches its org's receiver only", async (context) => {
  const { service } = context;
  const orgA = await service.createOrg("Acme");
  const orgB = await service.createOrg("Beta");
  const [receiverA, receiverB] = [await startReceiver(), await startReceiver()];
  context.receivers.push(receiverA, receiverB);
  await service.call("POST", "/webhooks", orgA, { url: receiverA.url, events: EVENTS });
  await service.call("POST", "/webhooks", orgB, { url: receiverB.url, events: EVENTS });
  const alice = await service.call("POST", "/users", orgA, { extension: "101", name: "Alice" });
  await service.call("POST", "/users", orgB, { extension: "101", name: "Bob" });
  await service.deploy();

  const phone = await startBaresip({
    user: alice.sip_username,
    password: alice.sip_password,
    registrar: `127.0.0.1:${service.engine.sipPort}`,
  });
  try {
    const registered = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
    assert.is(registered.type, "REGISTER_OK", JSON.stringify(registered));
    await receiverA.waitFor(1, 15_000);
    const registeredBody = JSON.parse(receiverA.requests[0]!.body);
    assert.is(registeredBody.event, "user.registered");
    assert.is(registeredBody.organization_id, orgA.id);
    assert.is(registeredBody.data.extension, "101");
    assert.is(registeredBody.data.endpoint, `${orgA.prefix}101`);
    assert.match(registeredBody.data.contact, `@127.0.0.1:${phone.sipPort}`);

    // Deleting the account makes baresip unregister (REGISTER with Expires: 0).
    await phone.command("uadel", String(registered.accountaor));
    await receiverA.waitFor(2, 15_000);
    const unregisteredBody = JSON.parse(receiverA.requests[1]!.body);
    assert.is(unregisteredBody.event, "user.unregistered");
    assert.is(unregisteredBody.organization_id, orgA.id);
    assert.is(unregisteredBody.data.contact, registeredBody.data.contact);
  } finally {
    await phone.stop();
  }
  assert.equal(
    receiverA.requests.map((r) => r.headers["x-pbx-event"]),
    ["user.registered", "user.unregistered"],
    "one delivery per change, not one per ContactStatus event",
  );
  assert.is(receiverB.requests.length, 0, "org B never gets org A's events");
});

test.run();
