// Music on hold in a real Asterisk 22: an org with uploaded files gets its own class (and loads
// with no WARNING/ERROR), its queues and its calls play it, its phones suggest it when they hold;
// an org without files has no class and its queue plays Asterisk's `default`. Through the
// deployer, the class appears when the first file is deployed and goes with the last one, each
// change reloading res_musiconhold, with the engine never warning about an empty directory.
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { splitIntoUnits } from "../../src/deploy/units.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { compileYaml, engineDeployer, silentWav, withEngine } from "./helpers.js";
import { channelsIdle } from "./trace.js";

const A = "aaaaaaaa-0000-4000-8000-000000000001";
const B = "bbbbbbbb-0000-4000-8000-000000000002";
const MD5 = "5f4dcc3b5aa765d61d8327deb882cf99";
const A_CLASS = "orga_moh";

function orgYaml(prefix: string, id: string, music: string[]): string {
  return `
org: { id: ${id}, name: Org ${prefix}, context_prefix: ${prefix} }
music_on_hold: [${music.join(", ")}]
users: [ { extension: "101", name: Alice, sip: { md5_cred: ${MD5} } } ]
queues: [ { number: "600", name: Support, max_wait: 1 } ]
dids: [ { number: "+91806597800${id[0] === "a" ? 1 : 2}", routing_type: queue, routing_destination: "600" } ]
`;
}

const WITH_MUSIC = orgYaml("orga_", A, ["ambient", "welcome-loop"]);
const WITHOUT_MUSIC = orgYaml("orgb_", B, []);

const TEST_DIALPLAN = "[pbxtest-silent]\nexten => s,1,Wait(15)\n same => n,Hangup()\n";
const STARTED = /Started music on hold, class '([^']+)', on channel '([^']+)'/;

/** The class a Local call into `target` hears first (waiting in a queue, say). */
async function classHeard(engine: AsteriskInstance, target: string): Promise<string> {
  await channelsIdle(engine);
  const since = engine.log().length;
  await engine.cli(`channel originate Local/${target} extension s@pbxtest-silent`);
  const text = await engine.waitForLog(STARTED, { since });
  return STARTED.exec(text)![1]!;
}

test("an org with files has its own class, heard in its queues and suggested by its phones; one without keeps default", async () => {
  const sounds = {
    [`moh/${A}/ambient.wav`]: silentWav(),
    [`moh/${A}/welcome-loop.wav`]: silentWav(),
  };
  await withEngine(
    compileYaml(WITH_MUSIC, WITHOUT_MUSIC),
    async (engine) => {
      assert.equal(engine.problems(), [], "loads with no WARNING/ERROR");
      const classes = await engine.cli("moh show classes");
      assert.match(classes, `Class: ${A_CLASS}\n\tMode: files\n\tDirectory: sounds/moh/${A}\n`);
      assert.match(classes, "Class: default\n", "stock hold music stays");
      assert.not.match(classes, "orgb_", "no files, no class");
      const files = await engine.cli("moh show files");
      assert.match(files, `sounds/moh/${A}/ambient`);
      assert.match(files, `sounds/moh/${A}/welcome-loop`);

      assert.is(await classHeard(engine, `600@orga_queue`), A_CLASS, "org A's queue");
      assert.is(
        await classHeard(engine, "+918065978001@gateway-inbound"),
        A_CLASS,
        "a DID call into org A's queue",
      );
      assert.is(await classHeard(engine, `600@orgb_queue`), "default", "org B's queue");
      assert.match(
        await engine.cli("pjsip show endpoint orga_101"),
        new RegExp(`moh_suggest\\s+: ${A_CLASS}\\n`),
        "org A's phones suggest its class when they hold",
      );
      assert.match(await engine.cli("pjsip show endpoint orgb_101"), /moh_suggest\s+: default\n/);
      assert.equal(engine.problems(), [], "the calls logged no WARNING/ERROR");
    },
    {
      sounds,
      etcFiles: { "extensions_test.conf": TEST_DIALPLAN },
      extensionsAppend: '#include "extensions_test.conf"',
    },
  );
});

test("deploys: the first file brings the class (res_musiconhold reloaded), the last one takes it away", async () => {
  await withEngine(
    compileYaml(orgYaml("orga_", A, [])),
    async (engine) => {
      const { target, deployer } = engineDeployer(engine);
      try {
        const deploy = async (yaml: string) => {
          const records = await deployer.deployUnits(splitIntoUnits(compileYaml(yaml)));
          assert.ok(
            records.every((r) => r.result !== "failed"),
            JSON.stringify(records, null, 1),
          );
          return records.flatMap((r) => r.reloads.map((o) => `${o.command} ${o.status}`));
        };
        const folder = join(engine.soundsDir, "moh", A);
        assert.not.match(await engine.cli("moh show classes"), A_CLASS);

        // An upload writes the file, then the org's deploy lists it.
        await mkdir(folder, { recursive: true });
        await writeFile(join(folder, "ambient.wav"), silentWav());
        const since = engine.log().length;
        const added = await deploy(orgYaml("orga_", A, ["ambient"]));
        assert.ok(added.includes("module reload res_musiconhold.so ok"), added.join(", "));
        assert.match(await engine.cli("moh show classes"), `Class: ${A_CLASS}\n`);
        assert.match(await engine.cli("queue show orga_q600"), "orga_q600");
        assert.is(await classHeard(engine, `600@orga_queue`), A_CLASS);

        // The last file deleted (with no call on hold: a call playing a file that is deleted
        // makes Asterisk warn for that call); the class goes with it.
        await channelsIdle(engine);
        await rm(join(folder, "ambient.wav"));
        const removed = await deploy(orgYaml("orga_", A, []));
        assert.ok(removed.includes("module reload res_musiconhold.so ok"), removed.join(", "));
        assert.not.match(await engine.cli("moh show classes"), A_CLASS);
        assert.is(await classHeard(engine, `600@orga_queue`), "default");
        assert.equal(engine.problems(since), [], "no WARNING/ERROR across the deploys");
      } finally {
        await target.close();
      }
    },
    {
      etcFiles: { "extensions_test.conf": TEST_DIALPLAN },
      extensionsAppend: '#include "extensions_test.conf"',
    },
  );
});

test.run();
