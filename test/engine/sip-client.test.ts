// A real SIP phone against pbxctl as an operator runs it: a store and the API, the deployer and
// scheduler reloading a real Asterisk 22 over AMI, and Debian's baresip as the phone. The user,
// its password and the IVR come from the API; the phone registers with that password (digest auth
// as generated), a wrong password is refused, and a call reaches the IVR and picks an option by
// RFC 2833 DTMF.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type Baresip, startBaresip } from "./baresip.js";
import { type Service, startService } from "./service.js";
import { calls, channelsIdle, steps } from "./trace.js";

interface Context {
  service: Service;
  prefix: string;
  /** The user created through the API, with the password the API gave once. */
  alice: { username: string; password: string };
  /** The user of the IVR option, whose phone must ring. */
  bob: { username: string; password: string };
  ivrId: string;
}

const test = suite<Context>("sip client");

test.before(async (context) => {
  context.service = await startService();
  const org = await context.service.createOrg("Acme");
  context.prefix = org.prefix;
  const post = (path: string, body: unknown, status?: number) =>
    context.service.call("POST", path, org, body, status);
  const alice = await post("/users", { extension: "101", name: "Alice" });
  assert.type(alice.sip_password, "string", "the API returns the SIP password once");
  context.alice = { username: alice.sip_username, password: alice.sip_password };
  const bob = await post("/users", { extension: "102", name: "Bob" });
  context.bob = { username: bob.sip_username, password: bob.sip_password };
  const ivr = await post("/ivrs", { name: "Main", extension: "500", timeout: 10, max_retries: 1 });
  context.ivrId = ivr.id;
  await context.service.call("PUT", `/ivrs/${ivr.id}/menu`, org, {
    options: [{ digit: "1", action_type: "extension", action_destination: "102" }],
  });
  // The embedded speech engine writes the greeting into the engine's sounds directory.
  await post(`/ivrs/${ivr.id}/generate-greeting`, { text: "Welcome to Acme" }, 200);
  await context.service.deploy();
  const endpoint = await context.service.engine.cli(`pjsip show endpoint ${org.prefix}101`);
  assert.not.match(endpoint, "Unable to find object", "the API's user reached the engine");
});

test.after(async (context) => {
  await context.service?.stop();
});

/** Runs `body` with a phone registering as `user`; the phone is killed by PID afterwards. */
async function withPhone<T>(
  context: Context,
  user: { username: string; password: string },
  body: (phone: Baresip) => Promise<T>,
): Promise<T> {
  const phone = await startBaresip({
    user: user.username,
    password: user.password,
    registrar: `127.0.0.1:${context.service.engine.sipPort}`,
  });
  try {
    return await body(phone);
  } finally {
    await phone.stop();
  }
}

test("baresip registers with the password the API gave; the engine lists its contact", async (context) => {
  const { engine } = context.service;
  await withPhone(context, context.alice, async (phone) => {
    const registered = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
    assert.is(registered.type, "REGISTER_OK", JSON.stringify(registered));
    // The list cuts long names; the AOR shows the contact URI whole.
    const contacts = await engine.cli("pjsip show contacts");
    assert.match(contacts, `Contact:  ${context.alice.username}/s`);
    const aor = await engine.cli(`pjsip show aor ${context.alice.username}`);
    // baresip adds an instance suffix to the user part of its Contact.
    const bound = new RegExp(
      `contact +: sip:${context.alice.username}[-\\w]*@127\\.0\\.0\\.1:${phone.sipPort}\\b`,
    );
    assert.match(aor, bound, `the phone's contact is bound to the AOR:\n${aor}`);
  });
});

test("a wrong password is refused and leaves no contact", async (context) => {
  const { engine } = context.service;
  const since = engine.log().length;
  // The previous test's phone may have left its contact (it stops without unregistering), and
  // this phone may get the same port: what counts is that no contact is added.
  const contactsOf = async () =>
    [
      ...(await engine.cli(`pjsip show aor ${context.alice.username}`)).matchAll(
        /contact +: (\S+)/g,
      ),
    ].map((m) => m[1]!);
  const before = await contactsOf();
  const wrong = { ...context.alice, password: `${context.alice.password}x` };
  await withPhone(context, wrong, async (phone) => {
    const answer = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
    assert.is(answer.type, "REGISTER_FAIL", JSON.stringify(answer));
    assert.match(String(answer.param), /^40[13] /, "refused with 401 or 403");
    await engine.waitForLog(/Request 'REGISTER' from .* Failed to authenticate/, { since });
    const added = (await contactsOf()).filter((contact) => !before.includes(contact));
    assert.equal(added, [], `no contact bound for the phone on port ${phone.sipPort}`);
  });
});

test("a call reaches the IVR and RFC 2833 DTMF picks the option's destination", async (context) => {
  const { engine } = context.service;
  const { prefix } = context;
  await withPhone(context, context.bob, async (bobs) => {
    await withPhone(context, context.alice, async (phone) => {
      for (const p of [bobs, phone]) {
        const registered = await p.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
        assert.is(registered.type, "REGISTER_OK", JSON.stringify(registered));
      }
      await channelsIdle(engine);
      // RTP debug logs each RFC 2833 event packet as it arrives: the digit came in the media.
      await engine.cli("rtp set debug on");
      const since = engine.log().length;
      const mark = phone.events.length;
      await phone.command("dial", `sip:500@127.0.0.1:${engine.sipPort}`);
      await phone.waitForEvent((e) => e.type === "CALL_ESTABLISHED", { since: mark });
      const menu = `${prefix}ivrm_500`;
      await engine.waitForLog(new RegExp(`Executing \\[s@${menu}:\\d+\\] BackGround`), { since });
      await phone.command("sndcode", "1");
      // The option's user is rung on the phone registered as that user.
      const ringing = await bobs.waitForEvent((e) => e.type === "CALL_INCOMING");
      assert.match(String(ringing.peeruri), "sip:101@", "with the caller ID of Alice's endpoint");
      await phone.command("hangup");
      const text = engine.log().slice(since);
      const trace = steps(text);
      const alicesCall = trace.filter((s) => s.channel.startsWith(`PJSIP/${prefix}101-`));
      assert.equal(
        calls(alicesCall.filter((s) => s.context === menu && s.exten === "s")).slice(0, 2),
        ["Answer()", `Background(greetings/greeting_ivr_${context.ivrId})`],
        "the IVR answered and played its greeting",
      );
      const option = alicesCall.find((s) => s.context === menu && s.exten === "1");
      assert.equal(
        option && calls([option]),
        [`Goto(${prefix}internal,102,1)`],
        "digit 1 was the option's",
      );
      assert.ok(
        calls(alicesCall).includes(`Dial(PJSIP/${prefix}102,30)`),
        `the option's user was dialled: ${calls(alicesCall).join(" | ")}`,
      );
      assert.match(text, /Got\s+RTP RFC2833 from\s+127\.0\.0\.1:\d+ .*event 00000001/);
      assert.match(text, new RegExp(`DTMF end '1' received on PJSIP/${prefix}101-`));
    });
  });
  await engine.cli("rtp set debug off");
});

test("registrations, the refusal and the call left no WARNING or ERROR in the engine's log", (context) => {
  assert.equal(context.service.engine.problems(), []);
});

test.run();
