// The deployer's AMI target against a real Asterisk 22: every command it can send is accepted
// and answered as recorded in fixtures/ami/asterisk-22.json (the fake AMI server of the fast suite
// answers from the same file, so it cannot accept what the engine would refuse), each reload's
// effect is visible in the engine, the include race cannot reach it, a reload Asterisk answered
// but did not apply is caught, and a module that declined at boot is loaded by the first deploy.
import { readFile, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { splitIntoUnits } from "../../src/deploy/units.js";
import { AMI_MAX_LINE_BYTES, commandOutput } from "../../src/engine/ami-connection.js";
import {
  CONTEXT_PROBE_EXTENSION,
  type createAmiTarget,
  moduleFileOf,
} from "../../src/engine/ami-target.js";
import {
  type AmiTranscript,
  TRANSCRIPT_FILE,
  type TranscriptAnswer,
  templateOf,
} from "../../src/engine/testing/ami-transcript.js";
import { LONG_LINE } from "../../src/engine/testing/fake-ami.js";
import {
  boot,
  compileYaml as compile,
  engineDeployer as rig,
  silentWav,
  withEngine,
} from "./helpers.js";

const MD5 = "5f4dcc3b5aa765d61d8327deb882cf99";

function org(prefix: string, id: string, extensions: string[], queues: string[] = []): string {
  return `
org: { id: ${id}, name: Org ${prefix}, context_prefix: ${prefix} }
users: [${extensions.map((e) => `{ extension: "${e}", name: User ${e}, sip: { md5_cred: ${MD5} } }`).join(", ")}]
queues: [${queues.map((q) => `{ number: "${q}", name: Queue ${q} }`).join(", ")}]
`;
}

/**
 * Logs in over a raw socket and sends one action of `lines` as they are (AmiConnection refuses to
 * send a line over the limit); resolves with the answer to it, `Key: value` pairs.
 */
function rawAmiAnswer(
  port: number,
  username: string,
  secret: string,
  lines: string[],
): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("error", reject);
    socket.write(
      `Action: Login\r\nUsername: ${username}\r\nSecret: ${secret}\r\nEvents: off\r\n\r\n`,
    );
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (const block of buffer.split("\r\n\r\n").slice(0, -1)) {
        if (!block.includes("ActionID: raw-1")) continue;
        const fields: Record<string, string> = {};
        for (const line of block.split("\r\n")) {
          const colon = line.indexOf(":");
          if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trim();
        }
        socket.destroy();
        resolve(fields);
        return;
      }
    });
  });
}

const A = org("orga_", "aaaaaaaa-0000-4000-8000-000000000001", ["101", "102"], ["600"]);
const M_ID = "cccccccc-0000-4000-8000-000000000003";
const B = org("orgb_", "bbbbbbbb-0000-4000-8000-000000000002", ["201"]);

test("every command the AMI target sends is answered as fixtures/ami/asterisk-22.json records", async () => {
  // Beside org A, an org with music of its own, for the shape of an org class in the listing.
  const withMusic = `${org("orgm_", M_ID, [])}music_on_hold: [ hold ]\n`;
  const music = { [`moh/${M_ID}/hold.wav`]: silentWav() };
  await withEngine(
    compile(A, withMusic),
    async (engine) => {
      const { target } = rig(engine);
      try {
        const asked: Array<{ command: string; name?: string; case: string }> = [
          { command: "dialplan reload", case: "ok" },
          { command: "module reload res_pjsip.so", case: "ok" },
          { command: "queue reload all", case: "ok" },
          { command: "queue reload all orga_q600", name: "orga_q600", case: "ok" },
          { command: "module reload app_voicemail.so", case: "ok" },
          { command: "module reload res_musiconhold.so", case: "ok" },
          { command: "core show uptime", case: "ok" },
          { command: "dialplan show orga_internal", name: "orga_internal", case: "found context" },
          {
            command: "dialplan show nosuch_internal",
            name: "nosuch_internal",
            case: "missing context",
          },
          {
            command: "dialplan show 101@orga_internal",
            name: "101@orga_internal",
            case: "found extension",
          },
          {
            command: "dialplan show 999@orga_internal",
            name: "999@orga_internal",
            case: "missing extension",
          },
          { command: "pjsip show endpoint orga_101", name: "orga_101", case: "found" },
          { command: "pjsip show endpoint orga_999", name: "orga_999", case: "missing" },
          { command: "queue show orga_q600", name: "orga_q600", case: "found" },
          { command: "queue show orga_q999", name: "orga_q999", case: "missing" },
          // app_queue unloaded and loaded again (the first load of the queues, without the
          // device-state storm), and the answer when the unload is refused (src/deploy/first-queue-load.ts).
          { command: "module refresh app_queue.so", name: "app_queue.so", case: "ok" },
          { command: "module refresh nosuch.so", name: "nosuch.so", case: "refused" },
          { command: "queue show orga_q600", name: "orga_q600", case: "found" },
          // Every class at once; the org class stands as `{name}` for the fake to repeat.
          { command: "moh show classes", name: "orgm_moh", case: "ok" },
          // A context probe asks for an extension no context holds: one line, whatever the
          // context's size (the gateway's holds 60,000 extensions at 1,000 orgs).
          {
            command: `dialplan show ${CONTEXT_PROBE_EXTENSION}@orga_internal`,
            name: "orga_internal",
            case: "found context probe",
          },
          {
            command: `dialplan show ${CONTEXT_PROBE_EXTENSION}@nosuch_internal`,
            name: "nosuch_internal",
            case: "missing context probe",
          },
          { command: "module load pbx_config.so", case: "blacklisted" },
          { command: "no such thing", case: "unknown" },
          { command: "ModuleLoad load app_queue.so", name: "app_queue.so", case: "already loaded" },
          { command: "ModuleLoad load func_uuid.so", name: "func_uuid.so", case: "loaded" },
          { command: "ModuleLoad load nosuch.so", name: "nosuch.so", case: "no such module" },
        ];
        const answers: TranscriptAnswer[] = [];
        for (const ask of asked) {
          const load = /^ModuleLoad load (\S+)$/.exec(ask.command);
          const message = await target.connection.action(
            load
              ? { Action: "ModuleLoad", Module: load[1]!, LoadType: "load" }
              : { Action: "Command", Command: ask.command },
          );
          answers.push(
            templateOf({
              command: ask.command,
              name: ask.name,
              case: ask.case,
              response: String(message.response ?? ""),
              message: String(message.message ?? ""),
              output: commandOutput(message),
            }),
          );
        }
        // A line one byte over what AMI reads, sent raw (AmiConnection never sends one), with
        // the longest line it accepts beside it for contrast.
        const longest = `queue reload all ${"q".repeat(AMI_MAX_LINE_BYTES - "Command: queue reload all ".length)}`;
        const fits = await rawAmiAnswer(engine.amiPort, engine.amiUsername, engine.amiSecret, [
          "Action: Command",
          "ActionID: raw-1",
          `Command: ${longest}`,
        ]);
        assert.equal(fits.Response, "Success", "a line of exactly the limit is read");
        const tooLong = await rawAmiAnswer(engine.amiPort, engine.amiUsername, engine.amiSecret, [
          "Action: Command",
          "ActionID: raw-1",
          `Command: ${longest}q`,
        ]);
        answers.push({
          command: LONG_LINE,
          case: "line too long",
          response: tooLong.Response ?? "",
          message: tooLong.Message ?? "",
          output: [],
        });
        const recorded: AmiTranscript = {
          engine: (await engine.cli("core show version")).trim().split(" ").slice(0, 2).join(" "),
          answers,
        };
        if (process.env.UPDATE_GOLDEN === "1") {
          await writeFile(TRANSCRIPT_FILE, `${JSON.stringify(recorded, null, 2)}\n`);
        }
        const expected = JSON.parse(await readFile(TRANSCRIPT_FILE, "utf8")) as AmiTranscript;
        assert.equal(
          recorded,
          expected,
          "the engine answers differently from the recorded transcript; rerun with UPDATE_GOLDEN=1 and review git diff fixtures/ami",
        );
        for (const command of [
          "dialplan reload",
          "queue reload all",
          "module reload res_pjsip.so",
        ]) {
          assert.ok(moduleFileOf(command), `${command} maps to a module`);
        }
      } finally {
        await target.close();
      }
    },
    { sounds: music },
  );
});

test("deploys through the real engine: each reload's effect is visible, removals too", async () => {
  await withEngine([], async (engine) => {
    const { target, deployer } = rig(engine);
    try {
      const first = await deployer.deployUnits(splitIntoUnits(compile(A)));
      assert.equal(
        first.map((r) => r.result),
        first.map(() => "ok"),
        JSON.stringify(first, null, 1),
      );
      assert.match(await engine.cli("dialplan show orga_internal"), "'101' =>");
      assert.not.match(await engine.cli("pjsip show endpoint orga_102"), "Unable to find object");
      assert.not.match(await engine.cli("queue show orga_q600"), "No such queue");
      const commands = first.flatMap((r) => r.reloads.map((o) => o.command));
      assert.ok(commands.includes("dialplan reload"));
      assert.ok(commands.includes("module reload res_pjsip.so"));

      const fewer = org("orga_", "aaaaaaaa-0000-4000-8000-000000000001", ["101"], []);
      const second = await deployer.deployUnits(splitIntoUnits(compile(fewer)));
      assert.ok(
        second.every((r) => r.result !== "failed"),
        JSON.stringify(second, null, 1),
      );
      assert.match(await engine.cli("pjsip show endpoint orga_102"), "Unable to find object");
      assert.match(await engine.cli("queue show orga_q600"), "No such queue");
      assert.equal(engine.problems(), []);
    } finally {
      await target.close();
    }
  });
});

test("include race: an include of an org whose files are not written yet never reaches the engine", async () => {
  await withEngine(compile(A), async (engine) => {
    const { target, deployer } = rig(engine);
    try {
      // Org B exists in the store (so the top-level files name it) but its deploy has not run.
      const all = compile(A, B);
      const top = all.filter((f) => !f.path.includes("/"));
      assert.ok(
        top.some((f) => f.content.includes("orgb_")),
        "the compiled top names org B",
      );
      const since = engine.log().length;
      const records = await deployer.deployUnits(splitIntoUnits(top));
      assert.ok(
        records.every((r) => r.result !== "failed"),
        JSON.stringify(records, null, 1),
      );
      const written = await readFile(join(engine.generatedDir, "pjsip.conf"), "utf8");
      assert.not.match(written, "orgb_", "the include of a missing file was left out");
      await engine.cli("module reload res_pjsip.so");
      assert.equal(engine.problems(since), [], "Asterisk kept every org's config");
      assert.not.match(await engine.cli("pjsip show endpoint orga_101"), "Unable to find object");
      // Org B's own deploy then adds it, include and all.
      const both = await deployer.deployUnits(splitIntoUnits(all));
      assert.ok(
        both.every((r) => r.result !== "failed"),
        JSON.stringify(both, null, 1),
      );
      assert.not.match(await engine.cli("pjsip show endpoint orgb_201"), "Unable to find object");
      assert.equal(engine.problems(since), []);
    } finally {
      await target.close();
    }
  });
});

test("a reload Asterisk answers but does not apply is recorded as failed, then applied by a retry", async () => {
  await withEngine(compile(A), async (engine) => {
    const { target, deployer } = rig(engine);
    try {
      await deployer.deployUnits(splitIntoUnits(compile(A)));
      // Someone breaks the top-level PJSIP file behind pbxctl's back: Asterisk stops reading a
      // config file at an `#include` of a missing file, so every org listed after it loses its
      // endpoints at each reload, yet the reload is answered "reloaded successfully".
      const top = join(engine.generatedDir, "pjsip.conf");
      const good = await readFile(top, "utf8");
      await writeFile(top, `#include "orgs/gone_/pjsip.conf"\n${good}`);
      const more = org(
        "orga_",
        "aaaaaaaa-0000-4000-8000-000000000001",
        ["101", "102", "103"],
        ["600"],
      );
      const orgFiles = compile(more).filter((f) => f.path.startsWith("orgs/"));
      const [failed] = await deployer.deployUnits(splitIntoUnits(orgFiles));
      assert.is(failed!.result, "failed");
      assert.match(failed!.error ?? "", /did not load the change: endpoint orga_103 is missing/);
      assert.equal(
        failed!.reloads.map((r) => r.status),
        failed!.reloads.map(() => "ok"),
      );
      // Fixed, the same deploy again reloads (the revision was never marked applied) and verifies.
      await writeFile(top, good);
      const [retried] = await deployer.deployUnits(splitIntoUnits(orgFiles));
      assert.is(retried!.result, "ok", JSON.stringify(retried, null, 1));
      assert.not.match(await engine.cli("pjsip show endpoint orga_103"), "Unable to find object");
    } finally {
      await target.close();
    }
  });
});

test("a module that declined at boot (config not loadable yet) is loaded by the first deploy", async () => {
  // The tree engine init wrote before this release: top-level includes of files that do not
  // exist, so pbx_config and app_queue decline to load at boot.
  const engine = await boot([]);
  let target: ReturnType<typeof createAmiTarget> | null = null;
  try {
    await rm(join(engine.generatedDir, "extensions.conf"));
    await writeFile(join(engine.etcDir, "extensions.conf"), '#include "pbxctl/missing.conf"\n');
    await engine.cli("module unload pbx_config.so");
    assert.match(await engine.cli("module show like pbx_config"), "0 modules loaded");
    await writeFile(join(engine.etcDir, "extensions.conf"), '#include "pbxctl/extensions.conf"\n');
    const rigged = rig(engine);
    target = rigged.target;
    const records = await rigged.deployer.deployUnits(splitIntoUnits(compile(A)));
    assert.ok(
      records.every((r) => r.result === "ok"),
      JSON.stringify(records, null, 1),
    );
    const dialplan = records.flatMap((r) => r.reloads).find((o) => o.command === "dialplan reload");
    assert.match(
      dialplan?.output ?? "",
      /No such command 'dialplan reload'[\s\S]*ModuleLoad pbx_config\.so/,
    );
    assert.match(await engine.cli("dialplan show orga_internal"), "'101' =>");
  } finally {
    await target?.close();
    await engine.stop();
  }
});

test.run();
