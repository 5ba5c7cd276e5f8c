// The simulator and the engine agree: for the same DID and digits, the contexts and extensions
// `pbxctl simulate` names are the ones a real Asterisk 22 runs, in the same order (the caller's
// own channel; ringing and caller-ID subroutines and other legs left aside), and for a call that
// leaves through the trunk, the number and caller ID it predicts are what the carrier receives.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileAll } from "../../src/compiler/index.js";
import { type Simulation, simulateCall } from "../../src/compiler/simulate.js";
import {
  type AsteriskInstance,
  freeLoopbackPort,
} from "../../src/engine/testing/asterisk-instance.js";
import { loadOrgSources } from "../../src/model/files.js";
import type { OrgState } from "../../src/model/org-state.js";
import { encodeWav } from "../../src/tts/wav.js";
import { FakeCarrier } from "./carrier.js";
import { boot } from "./helpers.js";
import { type Step, traceCall } from "./trace.js";

const P = "org_sim_";
const MAIN = "eeeeeeee-0000-4000-8000-0000000000b1";
const MD5 = "5f4dcc3b5aa765d61d8327deb882cf99";

const org = (carrierPort: number) => `
org: { id: eeeeeeee-0000-4000-8000-000000000001, name: Simulated, context_prefix: ${P} }
users:
  - { extension: "101", name: Alice, sip: { md5_cred: ${MD5} } }
  - { extension: "102", name: Mobile, ring_target: phone, phone_number: "+919812345678", outbound_did: "+918065978002" }
  - { extension: "103", name: Carol, sip: { md5_cred: ${MD5} } }
queues:
  - { number: "601", name: Overflow, max_wait: 1, timeout_destination_type: user, timeout_destination: "103", members: [ { extension: "101" } ] }
ivrs:
  - id: ${MAIN}
    name: Main
    extension: "500"
    timeout: 1
    max_retries: 2
    greeting_prompt: greeting_ivr_${MAIN}
    options:
      - { digit: "1", action_type: extension, action_destination: "101" }
      - { digit: "2", action_type: queue, action_destination: "601" }
      - { digit: "3", action_type: ivr, action_destination: "501" }
      - { digit: "4", action_type: extension, action_destination: "102" }
      - { digit: "#", action_type: hangup }
  - { id: eeeeeeee-0000-4000-8000-0000000000b2, name: Billing, extension: "501", timeout: 1, max_retries: 1 }
  - { id: eeeeeeee-0000-4000-8000-0000000000b3, name: Draft, extension: "502", status: inactive }
dids:
  - { number: "+918065978001", routing_type: ivr, routing_destination: ${MAIN} }
  - { number: "+918065978002", routing_type: ivr, routing_destination: eeeeeeee-0000-4000-8000-0000000000b3 }
  - { number: "+918065978003", routing_type: external, routing_destination: "+919876543210" }
trunks: [ { name: carrier, host: 127.0.0.1, port: ${carrierPort} } ]
outbound_routes:
  - { name: India, patterns: ["_91XXXXXXXXXX"], trunk: carrier }
  - { name: Anything, patterns: ["_X."], trunk: carrier, strip_digits: 1 }
`;

/** The far end of each traced call: silence, or DTMF digits once the greeting plays. */
const TEST_DIALPLAN = [
  "[simtest-dtmf]",
  "exten => _D.,1,Wait(1)",
  " same => n,SendDTMF(${EXTEN:1},200)",
  " same => n,Wait(20)",
  " same => n,Hangup()",
  "[simtest-silent]",
  "exten => s,1,Wait(15)",
  " same => n,Hangup()",
  "",
].join("\n");

// Subroutines the simulator shows under the step that calls them, not as steps of the path.
const SUBROUTINES = ["dial", "caller", "record", "limit"].map((name) => `${P}${name}`);

const test = suite<{ engine: AsteriskInstance; state: OrgState; carrier: FakeCarrier }>(
  "simulate vs engine",
);

test.before(async (context) => {
  const carrierPort = await freeLoopbackPort();
  context.carrier = new FakeCarrier();
  await context.carrier.listen(carrierPort);
  const loaded = loadOrgSources([{ file: "simulated.yaml", text: org(carrierPort) }], {});
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((d) => `${d.path}: ${d.message}`).join("\n"));
  context.state = loaded.orgs[0]!.state;
  const compiled = compileAll([context.state], {
    environment: "prod",
    staging_endpoint: "staging-tunnel",
  });
  context.engine = await boot(compiled.files, {
    etcFiles: { "extensions_simtest.conf": TEST_DIALPLAN },
    extensionsAppend: '#include "extensions_simtest.conf"',
  });
  const silence = encodeWav(new Int16Array(8000 * 2), 8000);
  await writeFile(join(context.engine.soundsDir, "greetings", `greeting_ivr_${MAIN}.wav`), silence);
});

test.after(async (context) => {
  await context.engine?.stop();
  await context.carrier?.close();
});

const dedupe = (places: string[]) => places.filter((place, i) => place !== places[i - 1]);

/** The simulated path: the caller's own steps, as `context,exten`. */
function simulatedPlaces(simulation: Simulation): string[] {
  return dedupe(
    simulation.steps.filter((s) => !s.subroutine).map((s) => `${s.context},${s.exten}`),
  );
}

/** The traced path: the steps of the channel that entered the org, as `context,exten`. */
function tracedPlaces(steps: readonly Step[]): string[] {
  const channel = steps.find((s) => s.context === `${P}incoming`)?.channel;
  assert.ok(channel, "the call never entered the org's incoming context");
  return dedupe(
    steps
      .filter((s) => s.channel === channel && !SUBROUTINES.includes(s.context))
      .map((s) => `${s.context},${s.exten}`),
  );
}

const CASES: {
  name: string;
  did: string;
  digits: string[];
  peer: string;
  /** The last step of the call (goodbye is the prompt: the far end may hang up during it). */
  until: RegExp;
}[] = [
  {
    name: "local-form DID, option 1 to a user",
    did: "08065978001",
    digits: ["1"],
    peer: "D1@simtest-dtmf",
    // The user never registered: the dial step hangs up (offline) before internal would.
    until: new RegExp(`Executing \\[101@${P}dial:\\d+\\] Hangup`),
  },
  {
    name: "E.164 DID, no digit: timeouts until max_retries, then goodbye",
    did: "+918065978001",
    digits: [],
    peer: "s@simtest-silent",
    until: new RegExp(`Executing \\[t@${P}ivrm_500:\\d+\\] Playback\\(.*vm-goodbye`),
  },
  {
    name: "international-form DID, an invalid digit then silence",
    did: "918065978001",
    digits: ["9"],
    peer: "D9@simtest-dtmf",
    until: new RegExp(`Executing \\[t@${P}ivrm_500:\\d+\\] Playback\\(.*vm-goodbye`),
  },
  {
    name: "option 2 to a queue nobody answers, then its timeout destination",
    did: "+918065978001",
    digits: ["2"],
    peer: "D2@simtest-dtmf",
    // The user never registered: the dial step hangs up (offline) before internal would.
    until: new RegExp(`Executing \\[103@${P}dial:\\d+\\] Hangup`),
  },
  {
    name: "option 3 to a nested IVR that times out",
    did: "+918065978001",
    digits: ["3"],
    peer: "D3@simtest-dtmf",
    until: new RegExp(`Executing \\[t@${P}ivrm_501:\\d+\\] Playback\\(.*vm-goodbye`),
  },
  {
    name: "option # hangs up with goodbye",
    did: "+918065978001",
    digits: ["#"],
    peer: "D#@simtest-dtmf",
    until: new RegExp(`Executing \\[#@${P}ivrm_500:\\d+\\] Playback\\(.*vm-goodbye`),
  },
];

for (const c of CASES) {
  test(`simulate and the engine agree: ${c.name}`, async ({ engine, state }) => {
    const simulation = simulateCall(state, { did: c.did, digits: c.digits, noAnswer: true });
    const steps = await traceCall(engine, `${c.did}@${P}incoming`, c.peer, c.until);
    assert.equal(
      tracedPlaces(steps),
      simulatedPlaces(simulation),
      `traced (actual) vs simulated (expected)\n${simulation.steps.map((s) => s.text).join("\n")}`,
    );
  });
}

const DIAL_OUT: { name: string; did: string; digits: string[]; peer: string }[] = [
  {
    name: "a DID routed to an external number (the org's first DID as caller ID)",
    did: "+918065978003",
    digits: [],
    peer: "s@simtest-silent",
  },
  {
    name: "option 4 to a mobile user (her own outbound_did as caller ID)",
    did: "08065978001",
    digits: ["4"],
    peer: "D4@simtest-dtmf",
  },
];

for (const c of DIAL_OUT) {
  test(`simulate predicts what the carrier receives: ${c.name}`, async ({
    engine,
    state,
    carrier,
  }) => {
    const simulation = simulateCall(state, { did: c.did, digits: c.digits });
    const predicted = simulation.dial_out;
    assert.ok(predicted, `the simulation dials out:\n${simulation.outcome}`);
    const before = carrier.invites.length;
    await traceCall(
      engine,
      `${c.did}@${P}incoming`,
      c.peer,
      new RegExp(`Dial\\("[^"]*", "PJSIP/${predicted.number}@${P}trunk_${predicted.trunk}`),
    );
    const invite = await carrier.invite(before + 1);
    assert.equal(
      { number: invite.number, callerId: invite.callerId },
      { number: predicted.number, callerId: predicted.caller_id },
    );
  });
}

test("simulate and the engine agree: a DID to an inactive IVR ends where the IVR would be", async ({
  engine,
  state,
}) => {
  const simulation = simulateCall(state, { did: "+918065978002" });
  const last = simulation.steps.at(-1)!;
  assert.is(`${last.context},${last.exten}`, `${P}ivr,502`);
  await traceCall(
    engine,
    `+918065978002@${P}incoming`,
    "s@simtest-silent",
    new RegExp(`invalid extension.*${P}ivr,502`),
  );
});

test.run();
