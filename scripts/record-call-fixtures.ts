// Records the AMI events of real calls through Asterisk 22 into fixtures/calls/<scenario>.json,
// the input of the fast suite's call-ingest tests (test/calls/fixtures.test.ts). Needs
// PBX_ASTERISK_PREFIX like the engine suite, and baresip for the scenarios with real phones.
// Run: npm run record:call-fixtures [scenario...] (all of them without a name)
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AmiConnection, type AmiMessage } from "../src/engine/ami-connection.js";
import { freeLoopbackPort } from "../src/engine/testing/asterisk-instance.js";
import { type Baresip, startBaresip } from "../test/engine/baresip.js";
import {
  PREFIX_A,
  phonePassword,
  SCENARIO_CARRIER_HOST,
  SCENARIO_ORGS,
  SCENARIOS,
  type ScenarioTools,
  scenarioDialplan,
  scenarioFiles,
  writeGreeting,
} from "../test/engine/call-scenarios.js";
import { FakeCarrier } from "../test/engine/carrier.js";
import { boot } from "../test/engine/helpers.js";
import { channelsIdle } from "../test/engine/trace.js";

// Per-step dialplan chatter: hundreds per call and nothing call records or journeys use.
const NOISE = new Set([
  "varset",
  "newexten",
  "rtcpsent",
  "rtcpreceived",
  "fullybooted",
  "successfulauth",
]);

const root = new URL("..", import.meta.url).pathname;
const carrierPort = await freeLoopbackPort();
const carrier = new FakeCarrier();
await carrier.listen(carrierPort, SCENARIO_CARRIER_HOST);
const engine = await boot(scenarioFiles(carrierPort), {
  etcFiles: { "extensions_test.conf": scenarioDialplan() },
  extensionsAppend: '#include "extensions_test.conf"',
});
const ami = new AmiConnection({
  host: "127.0.0.1",
  port: engine.amiPort,
  username: engine.amiUsername,
  secret: engine.amiSecret,
  events: true,
});
try {
  await writeGreeting(engine);
  let events: AmiMessage[] = [];
  ami.onEvent((event) => {
    if (!NOISE.has(String(event.event).toLowerCase())) events.push(event);
  });
  await ami.ready(15_000);
  // Real phones (Debian's baresip) for the scenarios that need one, stopped after each.
  const phones: Baresip[] = [];
  const tools: ScenarioTools = {
    async phone(extension) {
      const phone = await startBaresip({
        user: `${PREFIX_A}${extension}`,
        password: phonePassword(extension),
        registrar: `127.0.0.1:${engine.sipPort}`,
      });
      phones.push(phone);
      const registered = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
      if (registered.type !== "REGISTER_OK")
        throw new Error(
          `${extension} did not register: ${JSON.stringify(registered)} ${await engine.cli(`pjsip show endpoint ${PREFIX_A}${extension}`)}`,
        );
      return {
        async answerNext() {
          const since = phone.events.length;
          await phone.waitForEvent((e) => e.type === "CALL_INCOMING", { since });
          await phone.command("accept");
          await phone.waitForEvent((e) => e.type === "CALL_ESTABLISHED", { since });
        },
        async dial(to) {
          await phone.command("dial", `sip:${to}@127.0.0.1:${engine.sipPort}`);
        },
      };
    },
    channels: () => engine.cli("core show channels concise"),
  };
  const only = process.argv.slice(2);
  for (const scenario of SCENARIOS) {
    if (only.length > 0 && !only.includes(scenario.name)) continue;
    await channelsIdle(engine);
    events = [];
    await scenario.place(ami, tools);
    // Wait for the channels to go, then for the records Asterisk posts after the last hangup.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await channelsIdle(engine, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // A phone's registration events are not part of the call.
    for (const phone of phones.splice(0)) await phone.stop();
    events = events.filter((e) => !/^(contactstatus|registry)$/i.test(String(e.event)));
    const file = join(root, "fixtures", "calls", `${scenario.name}.json`);
    const fixture = {
      scenario: scenario.name,
      description: scenario.description,
      orgs: SCENARIO_ORGS,
      events,
    };
    await writeFile(file, `${JSON.stringify(fixture, null, 2)}\n`);
    console.log(
      `${scenario.name}: ${events.length} events, ${events.filter((e) => e.event === "Cdr").length} Cdr`,
    );
  }
} finally {
  await ami.close();
  await engine.stop();
  await carrier.close();
}
