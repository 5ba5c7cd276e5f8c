// Traced calls through the generated dialplan in a real Asterisk 22 (Local channels; DTMF sent by
// SendDTMF from the other half of the call). Proves SPEC §4.4 publish rules 1-5, queue timeouts
// to a user and to a phone, ring_target: phone, an inactive IVR being absent, and the caller-ID
// chain of §4.5 rules 2-5 as the carrier receives it in the INVITE. One suite for both PJSIP
// modes (calls.test.ts: files; realtime-calls.test.ts: the endpoints, auths and AORs as rows of
// a PostgreSQL the engine reads, issue 24), so the same scenarios prove both.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileAll } from "../../src/compiler/index.js";
import type { PjsipMode } from "../../src/config.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { freeLoopbackPort } from "../../src/engine/testing/asterisk-instance.js";
import { loadOrgSources } from "../../src/model/files.js";
import { encodeWav } from "../../src/tts/wav.js";
import { FakeCarrier } from "./carrier.js";
import { boot } from "./helpers.js";
import type { Postgres } from "./postgres.js";
import { realtimeForm, startRealtimeDatabase, writeRows } from "./realtime-rows.js";
import { calls, type Step, traceCall } from "./trace.js";

const A = "aaaaaaaa-0000-4000-8000-000000000001";
const P = `org_${A}_`;
const MAIN = "aaaaaaaa-0000-4000-8000-0000000000b1";
const MD5 = "5f4dcc3b5aa765d61d8327deb882cf99";

function orgsYaml(carrierPort: number): string {
  // Each org reaches the carrier at its own loopback address (the carrier listens on all of
  // them): an address one org's trunk matches is that org's inbound traffic alone.
  const trunk = (
    host: string,
  ) => `trunks: [ { name: carrier, host: ${host}, port: ${carrierPort} } ]
outbound_routes: [ { name: India, patterns: ["_91XXXXXXXXXX", "_X."], trunk: carrier } ]`;
  return `
org: { id: ${A}, name: Acme, context_prefix: ${P} }
users:
  - { extension: "101", name: Alice, sip: { md5_cred: ${MD5} } }
  - { extension: "102", name: Mobile Bob, ring_target: phone, phone_number: "+919812345678", outbound_did: "+918065978003" }
  - { extension: "103", name: Own DID, outbound_did: "+918065978002", sip: { md5_cred: ${MD5} } }
  - { extension: "150", name: Sales Bot, routing_type: ai_agent, sip: { md5_cred: ${MD5} } }
queues:
  - { id: aaaaaaaa-0000-4000-8000-0000000000a1, number: "600", name: Support, members: [ { extension: "101" } ] }
  - { number: "601", name: To a user, max_wait: 1, timeout_destination_type: user, timeout_destination: "103", members: [ { extension: "101" } ] }
  - { number: "603", name: To a phone, max_wait: 1, timeout_destination_type: phone, timeout_destination: "+919876543210" }
ivrs:
  - id: ${MAIN}
    name: Main
    extension: "500"
    timeout: 1
    max_retries: 2
    greeting_prompt: greeting_ivr_${MAIN}
    options:
      - { digit: "1", action_type: extension, action_destination: "101" }
      - { digit: "2", action_type: queue, action_destination: aaaaaaaa-0000-4000-8000-0000000000a1 }
      - { digit: "3", action_type: ivr, action_destination: aaaaaaaa-0000-4000-8000-0000000000b2 }
      - { digit: "4", action_type: ai_agent, action_destination: "150" }
      - { digit: "5", action_type: voicemail, action_destination: "101" }
      - { digit: "6", action_type: callback, action_destination: "+919876543210" }
      - { digit: "#", action_type: hangup }
  - { id: aaaaaaaa-0000-4000-8000-0000000000b2, name: Billing, extension: "501", timeout: 1, max_retries: 1 }
  - { id: aaaaaaaa-0000-4000-8000-0000000000b3, name: Old, extension: "502", status: inactive }
dids:
  - { number: "+918065978001", is_default: true, routing_type: ivr, routing_destination: ${MAIN} }
  - { number: "+918065978002" }
  - { number: "+918065978003" }
${trunk("127.0.0.1")}
---
# No default DID: the first assigned, active DID by number (rule 4).
org: { id: bbbbbbbb-0000-4000-8000-000000000002, name: First by number, context_prefix: org_b_ }
users: [ { extension: "101", name: Someone, sip: { md5_cred: ${MD5} } } ]
dids: [ { number: "+918065978009" }, { number: "+918065978004" }, { number: "+918065978005", status: inactive } ]
${trunk("127.0.0.3")}
---
# No DID at all: the sentinel (rule 5).
org: { id: cccccccc-0000-4000-8000-000000000003, name: No DIDs, context_prefix: org_c_ }
users: [ { extension: "101", name: Someone, sip: { md5_cred: ${MD5} } } ]
${trunk("127.0.0.4")}
---
# A default DID outside the owned range becomes the sentinel; a local-form DID is 91 + rest.
org: { id: dddddddd-0000-4000-8000-000000000004, name: Out of range, context_prefix: org_d_ }
users:
  - { extension: "101", name: Someone, sip: { md5_cred: ${MD5} } }
  - { extension: "102", name: Local form, outbound_did: "08065978029", sip: { md5_cred: ${MD5} } }
dids: [ { number: "+14155550100", is_default: true }, { number: "08065978029" } ]
${trunk("127.0.0.5")}
`;
}

/** The test's own dialplan: the far end of each Local call. */
function testDialplan(): string {
  const from = (prefix: string, ext: string) => `
[pbxtest-from-${prefix}${ext}]
; as a phone of the org would: its endpoint sets CALLER_EXT and starts in <prefix>internal
exten => _[0-9+*#].,1,Set(CALLER_EXT=${ext})
 same => n,Goto(${prefix}internal,\${EXTEN},1)
`;
  return [
    "[pbxtest-dtmf]",
    "; D<digits>: wait for the greeting to start, send the digits (RFC 2833 inside Asterisk), hang up",
    "exten => _D.,1,Wait(1)",
    " same => n,SendDTMF(${EXTEN:1},200)",
    " same => n,Wait(8)",
    " same => n,Hangup()",
    "[pbxtest-silent]",
    "exten => s,1,Wait(15)",
    " same => n,Hangup()",
    from(P, "101"),
    from(P, "103"),
    from("org_b_", "101"),
    from("org_c_", "101"),
    from("org_d_", "101"),
    from("org_d_", "102"),
    "",
  ].join("\n");
}

interface Context {
  engine: AsteriskInstance;
  carrier: FakeCarrier;
  /** Realtime mode: the database the engine reads PJSIP objects from. */
  db?: Postgres;
}

/** Defines and runs the traced calls on an engine whose PJSIP comes from `mode`. */
export function callTraceSuite(mode: PjsipMode): void {
  const test = suite<Context>(mode === "file" ? "calls" : "calls, realtime PJSIP");

  test.before(async (context) => {
    const carrierPort = await freeLoopbackPort();
    const loaded = loadOrgSources(
      orgsYaml(carrierPort)
        .split(/^---$/m)
        .map((text, index) => ({ file: `calls-${index}.yaml`, text })),
      {},
    );
    const errors = loaded.diagnostics.filter((d) => d.severity === "error");
    if (errors.length > 0) throw new Error(errors.map((d) => `${d.path}: ${d.message}`).join("\n"));
    const compiled = compileAll(
      loaded.orgs.map((org) => org.state),
      { environment: "prod", staging_endpoint: "staging-tunnel" },
    );
    let files = compiled.files;
    if (mode === "realtime") {
      // The rows straight from the compiler, before the engine boots (as a realtime deploy leaves
      // them); the generated tree keeps only the trunks' identify in the orgs' pjsip.conf.
      const realtime = realtimeForm(
        loaded.orgs.map((org) => org.state),
        files,
      );
      context.db = await startRealtimeDatabase();
      await writeRows(context.db, realtime.rows);
      files = realtime.files;
    }
    context.carrier = new FakeCarrier();
    await context.carrier.listen(carrierPort, "0.0.0.0");
    context.engine = await boot(files, {
      etcFiles: { "extensions_test.conf": testDialplan() },
      extensionsAppend: '#include "extensions_test.conf"',
      ...(context.db ? { pjsipDatabaseUrl: context.db.url } : {}),
    });
    // A real greeting file, so Background() plays it rather than warning that it is missing.
    const silence = encodeWav(new Int16Array(8000 * 2), 8000);
    await writeFile(
      join(context.engine.soundsDir, "greetings", `greeting_ivr_${MAIN}.wav`),
      silence,
    );
  });

  test.after(async (context) => {
    await context.engine?.stop();
    await context.carrier?.close();
    await context.db?.stop();
  });

  if (mode === "realtime") {
    test("realtime: the phones and trunks are rows the engine reads by id, none of them in a file", async ({
      engine,
    }) => {
      for (const prefix of [P, "org_b_", "org_c_", "org_d_"]) {
        const file = await engine.cli(`pjsip show endpoint ${prefix}101`);
        assert.match(file, new RegExp(`context +: ${prefix}internal`), file);
        const trunk = await engine.cli(`pjsip show endpoint ${prefix}trunk_carrier`);
        assert.match(trunk, new RegExp(`context +: ${prefix}incoming`), trunk);
      }
      // allow_unqualified_fetch=no: nothing walks the tables, so the unqualified listing is empty.
      assert.match(await engine.cli("pjsip show endpoints"), "No objects found.");
    });
  }

  const ivrMenu = `${P}ivrm_500`;

  function assertStep(
    list: readonly Step[],
    app: string,
    args: string | RegExp,
    what: string,
  ): Step {
    const found = list.find(
      (step) =>
        step.app === app && (typeof args === "string" ? step.args === args : args.test(step.args)),
    );
    assert.ok(found, `${what}: no ${app}(${args}) in\n${calls(list).join("\n")}`);
    return found!;
  }

  test("rule 1: an active IVR's entry sets the org id and IVR_RETRIES=0, plays the greeting, waits `timeout` s", async ({
    engine,
  }) => {
    const list = await traceCall(
      engine,
      `500@${P}ivr`,
      "s@pbxtest-silent",
      /Playback\("[^"]*", "vm-goodbye"\)/,
    );
    const entry = list.filter((step) => step.context === `${P}ivr`);
    assert.equal(calls(entry), [
      `Set(__ORG_ID=${A})`,
      "Set(IVR_RETRIES=0)",
      `Goto(${ivrMenu},s,1)`,
    ]);
    const menu = list.filter((step) => step.context === ivrMenu && step.exten === "s");
    assert.equal(calls(menu).slice(0, 3), [
      "Answer()",
      `Background(greetings/greeting_ivr_${MAIN})`,
      "WaitExten(1)",
    ]);
    assert.not.match(engine.log(), /File greetings\/greeting_ivr_\S+ does not exist/);
  });

  test("rule 2: no digit retries while IVR_RETRIES < max_retries, then goodbye and hangup", async ({
    engine,
  }) => {
    const list = await traceCall(
      engine,
      `500@${P}ivr`,
      "s@pbxtest-silent",
      /Executing \[t@[^\]]+:4\] Hangup/,
    );
    const menu = list.filter((step) => step.context === ivrMenu);
    // max_retries 2: the greeting is played twice, the second timeout says goodbye.
    assert.is(menu.filter((step) => step.app === "WaitExten").length, 2);
    const checks = menu
      .filter((step) => step.exten === "t" && step.app === "GotoIf")
      .map((s) => s.args);
    assert.equal(checks, [`1?${ivrMenu},s,start`, `0?${ivrMenu},s,start`]);
    assertStep(menu, "Playback", "vm-goodbye", "goodbye after the last try");
    // The run-time variable stayed a run-time variable in the file.
    const file = await engine.cli(`dialplan show t@${ivrMenu}`);
    assert.match(file, "Set(IVR_RETRIES=$[${IVR_RETRIES} + 1])");
  });

  test("rule 2: an invalid digit plays pbx-invalid and retries the menu", async ({ engine }) => {
    const list = await traceCall(
      engine,
      `500@${P}ivr`,
      "D9@pbxtest-dtmf",
      /Executing \[i@[^\]]+\] GotoIf/,
    );
    const invalid = list.filter((step) => step.context === ivrMenu && step.exten === "i");
    assert.equal(calls(invalid).slice(0, 3), [
      "Playback(pbx-invalid)",
      "Set(IVR_RETRIES=1)",
      `GotoIf(1?${ivrMenu},s,start)`,
    ]);
  });

  const options: Array<[digit: string, app: string, args: string | RegExp, what: string]> = [
    // No phone is registered here: the user is rung through the dial Gosub, which finds no
    // contact and returns without Dial (the registered case: sip-client.test.ts).
    ["1", "Gosub", `${P}dial,101,1(30)`, "extension: the user's extension in the internal context"],
    ["2", "Queue", new RegExp(`^${P}q600`), "queue: the queue number in the queue context"],
    ["3", "Goto", `${P}ivrm_501,s,1`, "ivr: the target IVR's extension in the IVR context"],
    ["4", "Gosub", `${P}dial,150,1(30)`, "ai_agent: the agent user's internal extension"],
    ["5", "VoiceMail", `101@${P}vm,u`, "voicemail: the mailbox"],
    ["6", "Playback", "auth-thankyou", "callback: a prompt after storing the caller"],
    ["#", "Playback", "vm-goodbye", "hangup: goodbye"],
  ];

  for (const [digit, app, args, what] of options) {
    test(`rule 3: option ${digit} by DTMF -> ${what}`, async ({ engine }) => {
      const pattern = new RegExp(
        `${app}\\("[^"]*", "${typeof args === "string" ? args.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : args.source.slice(1)}`,
      );
      const list = await traceCall(engine, `500@${P}ivr`, `D${digit}@pbxtest-dtmf`, pattern);
      const pressed = list.find((step) => step.context === ivrMenu && step.exten === digit);
      assert.ok(pressed, `the menu took digit ${digit}:\n${calls(list).join("\n")}`);
      assertStep(list, app, args, what);
    });
  }

  test("rule 3: the callback option stores the caller's number for the org", async ({ engine }) => {
    await traceCall(engine, `500@${P}ivr`, "D6@pbxtest-dtmf", /auth-thankyou/);
    const stored = await engine.cli(`database show callback/${A}`);
    assert.match(stored, new RegExp(`/callback/${A}/`));
  });

  test("rule 4: the IVR extension dialled from a phone wins over the catch-all outbound route", async ({
    engine,
  }) => {
    const list = await traceCall(
      engine,
      `500@pbxtest-from-${P}101`,
      "s@pbxtest-silent",
      /WaitExten/,
    );
    // Asterisk names the channel's context (internal) even when the match is an included one, so
    // the proof is what ran: the IVR's entry, not an outbound Dial.
    const org = list.filter((step) => step.context.startsWith(P));
    assert.equal(calls(org).slice(0, 3), [
      `Set(__ORG_ID=${A})`,
      "Set(IVR_RETRIES=0)",
      `Goto(${ivrMenu},s,1)`,
    ]);
    assert.not.ok(
      org.some((step) => step.app === "Dial"),
      "no outbound Dial",
    );
    const order = await engine.cli(`dialplan show ${P}internal`);
    const includes = [...order.matchAll(/Include =>\s+'([^']+)'/g)].map((m) => m[1]);
    assert.equal(includes, [`${P}ivr`, `${P}queue`, `${P}outbound`]);
  });

  for (const number of ["+918065978001", "08065978001"]) {
    test(`rule 5: DID ${number} through the gateway stores the IVR's id and reaches its extension`, async ({
      engine,
    }) => {
      const list = await traceCall(
        engine,
        `${number}@gateway-inbound`,
        "s@pbxtest-silent",
        /WaitExten/,
      );
      const incoming = list.filter((step) => step.context === `${P}incoming`);
      assert.ok(incoming.length > 0, "went through the org's incoming context");
      const jump = assertStep(list, "Goto", `${P}ivr,500,1`, "jumps to the IVR by its extension");
      assertStep(list, "Set", `__ORG_ID=${A}`, "sets the org id");
      const stored = assertStep(list, "Set", `__IVR_ID=${MAIN}`, "stores the IVR's UUID");
      assert.ok(list.indexOf(stored) < list.indexOf(jump), "the IVR id is set before the jump");
      assert.is(stored.context, `${P}incoming`, "set by the DID's entry");
    });
  }

  test("an inactive IVR is absent from the running dialplan", async ({ engine }) => {
    assert.match(await engine.cli(`dialplan show 502@${P}ivr`), /There is no existence of 502@/);
    assert.match(
      await engine.cli(`dialplan show ${P}ivrm_502`),
      /There is no existence of '[^']+' context/,
    );
  });

  test("queue timeout to a user: after max_wait the call rings that user", async ({ engine }) => {
    const list = await traceCall(
      engine,
      `601@${P}queue`,
      "s@pbxtest-silent",
      new RegExp(`Executing \\[103@${P}dial:\\d+\\] Hangup`),
    );
    assertStep(list, "Queue", new RegExp(`^${P}q601`), "joined the queue");
    assertStep(list, "Goto", `${P}internal,103,1`, "timeout destination: user 103");
  });

  test("queue timeout to a phone: after max_wait the call goes out through the trunk", async ({
    engine,
    carrier,
  }) => {
    const before = carrier.invites.length;
    await traceCall(
      engine,
      `603@${P}queue`,
      "s@pbxtest-silent",
      /Dial\("[^"]*", "PJSIP\/919876543210@/,
    );
    const invite = await carrier.invite(before + 1);
    assert.is(invite.number, "919876543210");
  });

  test("ring_target phone: calling the user dials the mobile through the trunk with the user's own DID (rule 2)", async ({
    engine,
    carrier,
  }) => {
    const before = carrier.invites.length;
    const list = await traceCall(
      engine,
      `102@pbxtest-from-${P}101`,
      "s@pbxtest-silent",
      /Dial\("[^"]*", "PJSIP\/919812345678@/,
    );
    assertStep(
      list,
      "Dial",
      new RegExp(`^Local/\\+919812345678@${P}outbound/n`),
      "rings the mobile via Local",
    );
    const invite = await carrier.invite(before + 1);
    assert.is(invite.number, "919812345678");
    assert.is(invite.callerId, "+918065978003");
  });

  const callerIds: Array<[from: string, expected: string, rule: string]> = [
    [`${P}103`, "+918065978002", "rule 2: the user's outbound_did"],
    [`${P}101`, "+918065978001", "rule 3: the org's default DID"],
    ["org_b_101", "+918065978004", "rule 4: the first assigned, active DID by number"],
    ["org_c_101", "+918065978000", "rule 5: no DID, the sentinel"],
    [
      "org_d_101",
      "+918065978000",
      "rule 5: a default outside the owned range becomes the sentinel",
    ],
    ["org_d_102", "+918065978029", "rule 5: a local-form DID is 91 + the rest"],
  ];

  for (const [from, expected, rule] of callerIds) {
    test(`caller ID as the carrier sees it, ${rule}`, async ({ engine, carrier }) => {
      const before = carrier.invites.length;
      await traceCall(
        engine,
        `919812345678@pbxtest-from-${from}`,
        "s@pbxtest-silent",
        /Dial\("[^"]*", "PJSIP\/919812345678@/,
      );
      const invite = await carrier.invite(before + 1);
      assert.is(invite.callerId, expected);
    });
  }

  test("a call to a phone that never registered: no Dial, DIALSTATUS=CHANUNAVAIL, 0 ERROR lines", async ({
    engine,
  }) => {
    const since = engine.log().length;
    const list = await traceCall(
      engine,
      `101@${P}internal`,
      "s@pbxtest-silent",
      new RegExp(`Executing \\[101@${P}dial:\\d+\\] Hangup`),
    );
    const ring = list.filter((step) => step.context === `${P}dial`);
    // Ended as Dial's failure did (cause 3): the record stays FAILED, the webhook call.failed.
    assert.equal(calls(ring), ["GotoIf(1?offline)", "Set(DIALSTATUS=CHANUNAVAIL)", "Hangup(3)"]);
    // Dial(PJSIP/<user>) with no contact logged two ERRORs here ("Could not create dialog",
    // "Failed to create outgoing session") before the dial Gosub checked for a contact.
    assert.equal(engine.problems(since), []);
  });

  test("every traced call logged no WARNING or ERROR", ({ engine }) => {
    assert.equal(engine.problems(), []);
  });

  test.run();
}
