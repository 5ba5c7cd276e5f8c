// What the real engine taught the deployer (issue: "Fix what the engine shows"), proven against
// the fake AMI server, which answers as Asterisk 22 did and "loads" the files the way it does:
// includes only of files on disk, a reload counted only when the engine shows it, a module that
// declined at boot loaded by the first deploy, and the fake refusing what the engine refuses.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileTopLevel } from "../../src/compiler/index.js";
import { probesForChange } from "../../src/deploy/engine-probes.js";
import { includedPath, keepIncludesOnDisk } from "../../src/deploy/include-guard.js";
import { AmiConnection, commandOutput } from "../../src/engine/ami-connection.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { orgFiles, rig } from "./helpers.js";

test("keepIncludesOnDisk drops exactly the includes whose file is missing", () => {
  const top = compileTopLevel(["a_", "b_"], { includeRoot: "/etc/asterisk/pbxctl" }).files.find(
    (f) => f.path === "extensions.conf",
  )!;
  const onDisk = new Set(["gateway/extensions.conf", "orgs/a_/extensions.conf"]);
  const guarded = keepIncludesOnDisk(top.content, (path) => onDisk.has(path));
  assert.equal(guarded.dropped, ["orgs/b_/extensions.conf"]);
  assert.match(guarded.content, '#include "/etc/asterisk/pbxctl/orgs/a_/extensions.conf"');
  assert.not.match(guarded.content, "orgs/b_/");
  assert.is(keepIncludesOnDisk(top.content, () => true).content, top.content);
  const moh = compileTopLevel(["a_", "b_"]).files.find((f) => f.path === "musiconhold.conf")!;
  assert.equal(
    keepIncludesOnDisk(moh.content, (path) => path === "orgs/a_/musiconhold.conf").dropped,
    ["orgs/b_/musiconhold.conf"],
    "the music-on-hold include file is guarded like the others",
  );
  assert.is(includedPath("orgs/x_/pjsip.conf"), "orgs/x_/pjsip.conf");
  assert.is(includedPath("/abs/path/gateway/extensions.conf"), "gateway/extensions.conf");
  assert.is(includedPath("somewhere/else.conf"), null);
});

test("probes: added objects must be present, removed ones absent, a changed one present", () => {
  const before = "[p_internal]\nexten => 101,1,Answer()\n\n[p_old]\nexten => s,1,NoOp()\n";
  const after = "[p_internal]\nexten => 101,1,Answer()\n\n[p_new]\nexten => s,1,NoOp()\n";
  assert.equal(
    probesForChange("orgs/p_/extensions.conf", before, after).map((p) => [
      p.kind,
      p.name,
      p.present,
    ]),
    [
      ["context", "p_new", true],
      ["context", "p_old", false],
    ],
  );
  const grown =
    "[p_internal]\nexten => 101,1,Answer()\nexten => 102,1,Answer()\n\n[p_old]\nexten => s,1,NoOp()\n";
  assert.equal(
    probesForChange("orgs/p_/extensions.conf", before, grown).map((p) => p.name),
    ["p_internal", "102@p_internal"],
  );
  const endpoints = probesForChange(
    "orgs/p_/pjsip.conf",
    "[p_101]\ntype=endpoint\n[p_101]\ntype=auth\n",
    "[p_102]\ntype=endpoint\n",
  );
  assert.equal(
    endpoints.map((p) => [p.kind, p.name, p.present]),
    [
      ["endpoint", "p_102", true],
      ["endpoint", "p_101", false],
    ],
  );
  assert.equal(probesForChange("orgs/p_/voicemail.conf", "a", "b"), []);
  assert.equal(probesForChange("orgs/p_/queues.conf", "[p_q1]\n", "[p_q1]\n"), []);
  const header = "; generated\n";
  const withClass = `${header}\n[p_moh]\nmode=files\ndirectory=sounds/moh/x\n`;
  assert.equal(
    [
      ...probesForChange("orgs/p_/musiconhold.conf", header, withClass),
      ...probesForChange("orgs/p_/musiconhold.conf", withClass, header),
    ].map((p) => [p.kind, p.name, p.present]),
    [
      ["music class", "p_moh", true],
      ["music class", "p_moh", false],
    ],
  );
});

test("a music class is verified in the engine's class listing after res_musiconhold reloads", async () => {
  const r = await rig();
  try {
    const music = {
      path: "orgs/one_/musiconhold.conf",
      content: "[one_moh]\nmode=files\ndirectory=sounds/moh/x\n",
    };
    const top = compileTopLevel(["one_"]).files;
    const records = await r.deployer.deployUnits([
      { unit: { kind: "org", prefix: "one_" }, files: [...orgFiles("one_"), music] },
      { unit: { kind: "top" }, files: top },
    ]);
    assert.ok(
      records.every((record) => record.result === "ok"),
      JSON.stringify(records, null, 1),
    );
    assert.ok(r.ami.commands().includes("module reload res_musiconhold.so"));
    const listing = r.ami.commands().lastIndexOf("moh show classes");
    assert.ok(
      listing > r.ami.commands().indexOf("module reload res_musiconhold.so"),
      "asked after the reload",
    );
    // The fake answers as Asterisk does: its own class, then the loaded org class.
    const answer = await r.target.connection.action({
      Action: "Command",
      Command: "moh show classes",
    });
    assert.equal(commandOutput(answer), [
      "Class: default",
      "\tMode: files",
      "\tDirectory: moh",
      "Class: one_moh",
      "\tMode: files",
      "\tDirectory: sounds/moh/x",
    ]);
  } finally {
    await r.close();
  }
});

test("the top-level include files are written last and never name an org not on disk", async () => {
  const r = await rig();
  try {
    const top = compileTopLevel(["one_", "two_"]).files;
    // Org two is in the store (the top names it) but its own deploy has not run yet.
    const [orgRecord, topRecord] = await r.deployer.deployUnits([
      { unit: { kind: "org", prefix: "one_" }, files: orgFiles("one_") },
      { unit: { kind: "top" }, files: top },
    ]);
    assert.is(orgRecord!.result, "ok");
    assert.is(topRecord!.result, "ok");
    const pjsip = await readFile(join(r.dir, "pjsip.conf"), "utf8");
    assert.match(pjsip, 'orgs/one_/pjsip.conf"');
    assert.not.match(pjsip, "orgs/two_/");
    // Its deploy then brings both its files and the include line.
    await r.deployer.deployUnits([
      { unit: { kind: "org", prefix: "two_" }, files: orgFiles("two_") },
      { unit: { kind: "top" }, files: top },
    ]);
    assert.match(await readFile(join(r.dir, "pjsip.conf"), "utf8"), 'orgs/two_/pjsip.conf"');
  } finally {
    await r.close();
  }
});

test("a reload the engine answered but did not apply is recorded failed, and not as applied", async () => {
  const r = await rig();
  try {
    const top = compileTopLevel(["one_"]).files;
    await r.deployer.deployUnits([
      { unit: { kind: "org", prefix: "one_" }, files: orgFiles("one_") },
      { unit: { kind: "top" }, files: top },
    ]);
    // An include of a missing file ahead of the org's: Asterisk stops reading there.
    const file = join(r.dir, "pjsip.conf");
    const good = await readFile(file, "utf8");
    await writeFile(file, `#include "orgs/gone_/pjsip.conf"\n${good}`);
    const changed = orgFiles("one_", {
      pjsip: "[one_100]\ntype=endpoint\n[one_200]\ntype=endpoint\n",
    });
    const [failed] = await r.deployer.deployUnits([
      { unit: { kind: "org", prefix: "one_" }, files: changed },
    ]);
    assert.is(failed!.result, "failed");
    assert.match(failed!.error ?? "", "endpoint one_200 is missing (orgs/one_/pjsip.conf)");
    assert.ok(
      failed!.reloads.every((o) => o.status === "ok"),
      "Asterisk said the reload worked",
    );
    assert.is((await r.log.applied("org:one_"))?.revision === failed!.revision, false);
    await writeFile(file, good);
    const [again] = await r.deployer.deployUnits([
      { unit: { kind: "org", prefix: "one_" }, files: changed },
    ]);
    assert.is(again!.result, "ok", again!.error);
    assert.ok(again!.reloads.some((o) => o.command === "module reload res_pjsip.so"));
  } finally {
    await r.close();
  }
});

test("a module that declined at boot is loaded (ModuleLoad) by the reload that needs it", async () => {
  const r = await rig();
  try {
    r.ami.unloadedModules.add("pbx_config.so");
    const [record] = await r.deployer.deployUnits([
      { unit: { kind: "org", prefix: "one_" }, files: orgFiles("one_") },
    ]);
    assert.is(record!.result, "ok", record!.error);
    const dialplan = record!.reloads.find((o) => o.command === "dialplan reload");
    assert.match(dialplan?.output ?? "", "No such command 'dialplan reload'");
    assert.match(dialplan?.output ?? "", "ModuleLoad pbx_config.so: Module loaded.");
    assert.ok(
      r.ami.received.some((a) => a.action === "ModuleLoad" && a.fields.Module === "pbx_config.so"),
    );
  } finally {
    await r.close();
  }
});

test("the fake AMI accepts only what Asterisk 22 accepted, answering as it did", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  const connection = new AmiConnection({
    host: "127.0.0.1",
    port,
    username: "pbxctl",
    secret: "secret",
  });
  connection.start();
  try {
    const ask = async (command: string) => {
      const message = await connection.action({ Action: "Command", Command: command });
      return { response: String(message.response), output: commandOutput(message).join("\n") };
    };
    assert.equal(await ask("dialplan reload"), {
      response: "Success",
      output: "Dialplan reloaded.",
    });
    assert.equal(await ask("module reload res_pjsip.so"), {
      response: "Success",
      output: "Module 'res_pjsip.so' reloaded successfully.",
    });
    // Never sent by pbxctl, and refused here, so no test can pass by sending them.
    for (const command of ["core reload", "module load pbx_config.so", "sip reload"]) {
      const answer = await ask(command);
      assert.is(answer.response, "Error", command);
    }
    // No engine directory: every object counts as loaded, answered in the engine's words.
    assert.match((await ask("queue show anyq")).output, "anyq has 0 calls (max unlimited)");
    assert.is(ami.reloadCommands().length, 2);
  } finally {
    await connection.close();
    await ami.close();
  }
});

test.run();
