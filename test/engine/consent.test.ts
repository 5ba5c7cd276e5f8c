// Recording consent in a real Asterisk 22 (issue 16): the org records calls, and a call from a
// number that refused recording leaves no recording file, while the same call from any other
// number is recorded; a call the org's route dials out to a refused number starts no recording. The org's dialplan is compiled with the refused number as the server
// compiles it (OrgState.recording_consent_refused), so the engine runs the very record step and
// consent context the golden fixture 21-consent-refused shows.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  type AsteriskInstance,
  freeLoopbackPort,
} from "../../src/engine/testing/asterisk-instance.js";
import { FakeCarrier } from "./carrier.js";
import { boot, compileYaml, until } from "./helpers.js";
import { channelsIdle } from "./trace.js";

const ORG = "cccccccc-0000-4000-8000-000000000003";
const PREFIX = `org_${ORG}_`;
const REFUSED = "+15551234567";
const WILLING = "+15550001111";

const orgYaml = (carrierPort: number) => `
org: { id: ${ORG}, name: Consent, context_prefix: ${PREFIX}, settings: { recording_enabled: true } }
users:
  - { extension: "101", name: Alice, sip: { md5_cred: 5f4dcc3b5aa765d61d8327deb882cf99 } }
trunks: [ { name: carrier, host: 127.0.0.1, port: ${carrierPort} } ]
outbound_routes: [ { name: All, patterns: ["_X."], trunk: carrier } ]
recording_consent_refused: ["${REFUSED}"]
`;

/** An answered, talking call presenting +<exten> as its caller, through the org's record step. */
const TEST_DIALPLAN = [
  "[pbxtest-consent]",
  "exten => _X.,1,Set(CALLERID(num)=+${EXTEN})",
  ` same => n,Set(CHANNEL(accountcode)=${ORG})`,
  ` same => n,Gosub(${PREFIX}record,s,1)`,
  " same => n,Dial(Local/talk@pbxtest-consent-talker,10)",
  " same => n,Hangup()",
  "[pbxtest-consent-out]",
  "; as org 101's phone dialling out; at hangup, logs whether the record step started recording",
  "exten => _X.,1,Set(PBXTEST_NUM=${EXTEN})",
  " same => n,Set(CHANNEL(hangup_handler_push)=pbxtest-consent-hh,s,1)",
  " same => n,Set(CALLER_EXT=101)",
  ` same => n,Goto(${PREFIX}outbound,\${EXTEN},1)`,
  "[pbxtest-consent-hh]",
  "exten => s,1,Log(NOTICE,pbxtest-consent ${PBXTEST_NUM} recording=${RECORDING}.)",
  " same => n,Return()",
  "[pbxtest-consent-talker]",
  "exten => talk,1,Answer()",
  " same => n,Playback(vm-goodbye)",
  " same => n,Playback(vm-goodbye)",
  " same => n,Hangup()",
  "",
].join("\n");

const test = suite<{ engine: AsteriskInstance; carrier: FakeCarrier }>(
  "recording consent in a real engine",
);

test.before(async (context) => {
  const carrierPort = await freeLoopbackPort();
  context.carrier = new FakeCarrier();
  await context.carrier.listen(carrierPort);
  context.engine = await boot(compileYaml(orgYaml(carrierPort)), {
    etcFiles: { "extensions_test.conf": TEST_DIALPLAN },
    extensionsAppend: '#include "extensions_test.conf"',
  });
});

test.after(async (context) => {
  await context.engine?.stop();
  await context.carrier?.close();
});

function recordings(engine: AsteriskInstance): string[] {
  const dir = join(engine.recordingsDir, ORG);
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".wav")) : [];
}

async function place(engine: AsteriskInstance, number: string): Promise<void> {
  await channelsIdle(engine);
  await engine.cli(`channel originate Local/${number.slice(1)}@pbxtest-consent application Wait 3`);
  await until("the call to start", async () =>
    /^[1-9]\d* active channel/m.test(await engine.cli("core show channels count")) ? true : null,
  );
  await channelsIdle(engine, 30_000);
}

test("the compiled consent context holds the refused number and its aliases", async ({
  engine,
}) => {
  const shown = await engine.cli(`dialplan show ${PREFIX}consent_refused`);
  assert.match(shown, "'+15551234567' =>");
  assert.match(shown, "'15551234567' =>");
});

test("a refused caller is not recorded; the same call from another number is", async ({
  engine,
}) => {
  await place(engine, REFUSED);
  assert.equal(recordings(engine), [], "no recording of the refused number");
  await place(engine, WILLING);
  const files = await until("the recording of the willing caller", () => {
    const found = recordings(engine);
    return found.length > 0 ? found : null;
  });
  assert.is(files.length, 1, files.join(", "));
});

test("a call dialled out to a refused number is not recorded; to another number it is", async ({
  engine,
  carrier,
}) => {
  for (const [number, recording] of [
    [REFUSED, ""],
    [WILLING, "1"],
  ] as const) {
    await channelsIdle(engine);
    const since = engine.log().length;
    const invites = carrier.invites.length;
    await engine.cli(
      `channel originate Local/${number.slice(1)}@pbxtest-consent-out application Wait 3`,
    );
    const line = await engine.waitForLog(
      new RegExp(`pbxtest-consent ${number.slice(1)} recording=[0-9]*\\.`),
      {
        since,
        timeoutMs: 20_000,
      },
    );
    assert.match(line, `recording=${recording}.`, `${number}: ${line}`);
    assert.ok(carrier.invites.length > invites, "the call reached the carrier");
  }
});

test.run();
