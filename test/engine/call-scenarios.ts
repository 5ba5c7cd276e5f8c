// Calls placed through a real Asterisk 22 for the call-record suites: two orgs, the test's own
// far ends, and one function per scenario. Shared by the engine suite (test/engine/call-records)
// and by `npm run record:call-fixtures`, which keeps the AMI events of each scenario as
// fixtures/calls/<scenario>.json for the fast suite.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { compileAll } from "../../src/compiler/index.js";
import type { CompiledFile } from "../../src/compiler/types.js";
import type { AmiConnection } from "../../src/engine/ami-connection.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { loadOrgSources } from "../../src/model/files.js";
import { sipDigest } from "../../src/model/secrets.js";
import { encodeWav } from "../../src/tts/wav.js";

export const ORG_A = "aaaaaaaa-0000-4000-8000-000000000001";
export const PREFIX_A = `org_${ORG_A}_`;
export const ORG_B = "bbbbbbbb-0000-4000-8000-000000000002";
export const PREFIX_B = "org_b_";
export const MAIN_IVR = "aaaaaaaa-0000-4000-8000-0000000000b1";
const MD5 = "5f4dcc3b5aa765d61d8327deb882cf99";

/** The orgs as the call ingest's directory sees them. */
export const SCENARIO_ORGS = [
  { id: ORG_A, context_prefix: PREFIX_A },
  { id: ORG_B, context_prefix: PREFIX_B },
] as const;

/**
 * Where the stand-in carrier listens: not the phones' 127.0.0.1, since the trunk identifies its
 * traffic by host and would otherwise claim the phones' REGISTERs.
 */
export const SCENARIO_CARRIER_HOST = "127.0.0.2";

/** The password of org A's phones 103 and 104, which register (baresip) in the phone scenarios. */
export const phonePassword = (extension: string) => `pw-${extension}`;
const phoneCred = (extension: string) =>
  sipDigest(`${PREFIX_A}${extension}`, phonePassword(extension));

function orgsYaml(carrierPort: number): string {
  // Each org reaches the carrier at its own loopback address (the carrier listens on all of
  // them): an address one org's trunk matches is that org's inbound traffic alone.
  const trunk = (
    host: string,
  ) => `trunks: [ { name: carrier, host: ${host}, port: ${carrierPort} } ]
outbound_routes: [ { name: India, patterns: ["_91XXXXXXXXXX"], trunk: carrier } ]`;
  return `
org: { id: ${ORG_A}, name: Acme, context_prefix: ${PREFIX_A} }
users:
  - { extension: "101", name: Alice, sip: { md5_cred: ${MD5} } }
  - { extension: "102", name: Bob, sip: { md5_cred: ${MD5} } }
  - { extension: "103", name: Carol, sip: { md5_cred: ${phoneCred("103")} } }
  - { extension: "104", name: Dave, sip: { md5_cred: ${phoneCred("104")} } }
  - { extension: "150", name: Agent, routing_type: ai_agent, sip: { md5_cred: ${MD5} } }
queues:
  - { id: aaaaaaaa-0000-4000-8000-0000000000a1, number: "600", name: Support, members: [ { extension: "101" } ] }
ivrs:
  - id: ${MAIN_IVR}
    name: Main
    extension: "500"
    timeout: 3
    max_retries: 1
    greeting_prompt: greeting_ivr_${MAIN_IVR}
    options:
      - { digit: "2", action_type: queue, action_destination: aaaaaaaa-0000-4000-8000-0000000000a1 }
dids:
  - { number: "+918065978001", is_default: true, routing_type: ivr, routing_destination: ${MAIN_IVR} }
${trunk(SCENARIO_CARRIER_HOST)}
---
org: { id: ${ORG_B}, name: Bravo, context_prefix: ${PREFIX_B} }
users: [ { extension: "101", name: Someone, sip: { md5_cred: ${MD5} } } ]
dids: [ { number: "+918065978004", routing_type: extension, routing_destination: "101" } ]
${trunk("127.0.0.3")}
`;
}

/** The generated files of both orgs and the gateway. */
export function scenarioFiles(carrierPort: number): CompiledFile[] {
  const loaded = loadOrgSources(
    orgsYaml(carrierPort)
      .split(/^---$/m)
      .map((text, index) => ({ file: `scenario-${index}.yaml`, text })),
    {},
  );
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((d) => `${d.path}: ${d.message}`).join("\n"));
  return compileAll(
    loaded.orgs.map((org) => org.state),
    { environment: "prod", staging_endpoint: "staging-tunnel" },
  ).files;
}

/** The far ends of the test calls: a caller that presses digits, a phone of an org. */
export function scenarioDialplan(): string {
  return [
    "[pbxtest-dtmf]",
    "; D<digits>: wait for the greeting, send the digits, stay on the line a while, hang up",
    "exten => _D.,1,Wait(1)",
    " same => n,SendDTMF(${EXTEN:1},200)",
    " same => n,Wait(4)",
    " same => n,Hangup()",
    "[pbxtest-hold]",
    "; the caller's side of a call that stays up until the test hangs it up",
    "exten => s,1,Wait(60)",
    " same => n,Hangup()",
    `[pbxtest-from-${PREFIX_A}101]`,
    "; as the phone of org A's 101 would: its endpoint sets CALLER_EXT and accountcode",
    "exten => _[0-9+*#].,1,Set(CALLER_EXT=101)",
    ` same => n,Set(CHANNEL(accountcode)=${ORG_A})`,
    ` same => n,Goto(${PREFIX_A}internal,\${EXTEN},1)`,
    "",
  ].join("\n");
}

/** Writes the greeting the IVR plays (silence), so Background() does not warn. */
export async function writeGreeting(engine: AsteriskInstance): Promise<void> {
  const silence = encodeWav(new Int16Array(8000), 8000);
  await writeFile(join(engine.soundsDir, "greetings", `greeting_ivr_${MAIN_IVR}.wav`), silence);
}

/** What a scenario with real phones needs: org A's phone on `extension`, registered. */
export interface ScenarioTools {
  phone(extension: string): Promise<ScenarioPhone>;
  /** The engine's channels now (`core show channels concise`). */
  channels(): Promise<string>;
}

export interface ScenarioPhone {
  /** Waits for the next incoming call and answers it. */
  answerNext(): Promise<void>;
  dial(extension: string): Promise<void>;
}

export interface Scenario {
  name: string;
  description: string;
  /** Starts the call; the scenario is over when the engine has no channel left. */
  place(ami: AmiConnection, tools?: ScenarioTools): Promise<void>;
}

/** The AMI Originate the API's click-to-call and AI originate send (src/domain/calls/call-origination.ts). */
function apiOriginate(first: string, then: { context: string; exten: string }, user: string) {
  const id = `pbx-${user}0000000-0000-4000-8000-000000000001`;
  return {
    Channel: first,
    Context: then.context,
    Exten: then.exten,
    Priority: "1",
    CallerID: `"${then.exten}" <${then.exten}>`,
    Account: ORG_A,
    ChannelId: id,
    OtherChannelId: `${id}-2`,
    Timeout: "30000",
    Variable: `CALLER_EXT=${user}`,
  };
}

function needTools(tools: ScenarioTools | undefined): ScenarioTools {
  if (!tools) throw new Error("this scenario needs real phones (ScenarioTools)");
  return tools;
}

async function waitFor<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function originate(ami: AmiConnection, fields: Record<string, string>): Promise<void> {
  const answer = await ami.action({ Action: "Originate", Async: "true", ...fields });
  if (String(answer.response).toLowerCase() !== "success") {
    throw new Error(`Originate refused: ${JSON.stringify(answer)}`);
  }
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "inbound-ivr-queue",
    description:
      "a caller dials org A's DID through the gateway, the IVR answers, the caller presses 2 for the support queue, nobody is free and the caller hangs up in the queue",
    place: (ami) =>
      originate(ami, {
        Channel: "Local/+918065978001@gateway-inbound",
        Context: "pbxtest-dtmf",
        Exten: "D2",
        Priority: "1",
        CallerID: '"Caller" <919812345678>',
      }),
  },
  {
    name: "missed-inbound",
    description:
      "a caller dials org B's DID routed to extension 101, whose phone is not registered: the call is not answered",
    place: (ami) =>
      originate(ami, {
        Channel: "Local/918065978004@gateway-inbound",
        Application: "Wait",
        Data: "2",
        CallerID: '"Caller" <919876543210>',
      }),
  },
  {
    name: "internal",
    description: "org A's 101 calls extension 102, whose phone is not registered",
    place: (ami) =>
      originate(ami, {
        Channel: `Local/102@pbxtest-from-${PREFIX_A}101`,
        Application: "Wait",
        Data: "2",
        CallerID: '"Alice" <101>',
      }),
  },
  {
    name: "outbound-busy",
    description: "org A's 101 calls a mobile number through the carrier trunk, which answers busy",
    place: (ami) =>
      originate(ami, {
        Channel: `Local/919812345678@pbxtest-from-${PREFIX_A}101`,
        Application: "Wait",
        Data: "2",
        CallerID: '"Alice" <101>',
      }),
  },
  {
    name: "click-to-call",
    description:
      "click-to-call of org A's 103 to a mobile number, as the API places it: the engine rings 103 (a real phone, which answers), then dials the number through the carrier trunk, which answers busy",
    async place(ami, tools) {
      const phone = await needTools(tools).phone("103");
      const answered = phone.answerNext();
      await originate(
        ami,
        apiOriginate(
          `Local/103@${PREFIX_A}internal`,
          { context: `${PREFIX_A}outbound`, exten: "919812345678" },
          "103",
        ),
      );
      await answered;
    },
  },
  {
    name: "ai-originate",
    description:
      "AI originate of org A, as the API places it: the engine dials a mobile number out through the carrier trunk first (busy), so the AI agent 150 is never connected",
    place: (ami) =>
      originate(
        ami,
        apiOriginate(
          `Local/919812345679@${PREFIX_A}outbound`,
          { context: `${PREFIX_A}internal`, exten: "150" },
          "150",
        ),
      ),
  },
  {
    name: "transfer",
    description:
      "org A's 103 calls 104 (real phones, answered), then the API's blind transfer sends 103 on to a mobile number through the carrier trunk (busy); 104's leg ends",
    async place(ami, tools) {
      const t = needTools(tools);
      const caller = await t.phone("103");
      const callee = await t.phone("104");
      const answered = callee.answerNext();
      await caller.dial("104");
      await answered;
      const channel = await waitFor("104's answered channel", async () => {
        const line = (await t.channels())
          .split("\n")
          .find((l) => l.startsWith(`PJSIP/${PREFIX_A}104-`) && l.includes("!Up!"));
        return line ? line.split("!")[0]! : null;
      });
      const answer = await ami.action({
        Action: "BlindTransfer",
        Channel: channel,
        Context: `${PREFIX_A}internal`,
        Exten: "919812345678",
      });
      if (String(answer.response).toLowerCase() !== "success") {
        throw new Error(`BlindTransfer refused: ${JSON.stringify(answer)}`);
      }
    },
  },
];
