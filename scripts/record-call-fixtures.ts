// Records the AMI events of real calls through Asterisk 22 into fixtures/calls/<scenario>.json,
// the input of the fast suite's call-ingest tests (test/calls/fixtures.test.ts). Needs
// PBX_ASTERISK_PREFIX like the engine suite. Run: npm run record:call-fixtures
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AmiConnection, type AmiMessage } from "../src/engine/ami-connection.js";
import { freeLoopbackPort } from "../src/engine/testing/asterisk-instance.js";
import {
  SCENARIO_ORGS,
  SCENARIOS,
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
await carrier.listen(carrierPort);
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
  for (const scenario of SCENARIOS) {
    await channelsIdle(engine);
    events = [];
    await scenario.place(ami);
    // Wait for the channels to go, then for the records Asterisk posts after the last hangup.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await channelsIdle(engine, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
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
