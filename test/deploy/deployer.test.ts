import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FileDeployLog } from "../../src/deploy/deploy-log.js";
import { Deployer, NoPreviousVersionError } from "../../src/deploy/deployer.js";
import { revisionOf } from "../../src/deploy/revision.js";
import { readSnapshot } from "../../src/deploy/snapshots.js";
import { deployTree } from "../../src/deploy/tree.js";
import { InvalidDeployPathError, orgUnit } from "../../src/deploy/units.js";
import { createNoneTarget } from "../../src/engine/none-target.js";
import { orgFiles, rig, tempDir } from "./helpers.js";

const ACME = orgUnit("org_acme_");

test("a first deploy writes every file, reloads each module once and records health", async () => {
  const r = await rig();
  try {
    const record = await r.deployer.deploy(ACME, orgFiles("org_acme_"));
    assert.is(record.result, "ok");
    assert.equal(record.filesWritten, [
      "orgs/org_acme_/extensions.conf",
      "orgs/org_acme_/pjsip.conf",
      "orgs/org_acme_/queues.conf",
    ]);
    // Nothing was loaded before, so queues reload by name (only new queues).
    assert.equal(r.ami.reloadCommands(), [
      "module reload res_pjsip.so",
      "dialplan reload",
      "queue reload all org_acme_q_5000",
    ]);
    assert.is(record.health?.status, "healthy");
    assert.match(record.health?.uptime ?? "", /^System uptime:/);
    assert.ok(r.ami.received.some((a) => a.action === "Ping"));
    const content = await readFile(join(r.dir, "orgs/org_acme_/pjsip.conf"), "utf8");
    assert.is(content, orgFiles("org_acme_")[1]!.content);
    const applied = await r.log.applied("org:org_acme_");
    assert.is(applied?.revision, revisionOf(orgFiles("org_acme_")));
  } finally {
    await r.close();
  }
});

test("an unchanged redeploy writes nothing and reloads nothing", async () => {
  const r = await rig();
  try {
    await r.deployer.deploy(ACME, orgFiles("org_acme_"));
    const file = join(r.dir, "orgs/org_acme_/extensions.conf");
    const before = (await stat(file)).mtimeMs;
    const reloadsBefore = r.ami.reloadCommands().length;
    const record = await r.deployer.deploy(ACME, orgFiles("org_acme_"));
    assert.is(record.result, "unchanged");
    assert.equal(record.filesWritten, []);
    assert.equal(record.reloads, []);
    assert.is(r.ami.reloadCommands().length, reloadsBefore);
    assert.is((await stat(file)).mtimeMs, before);
  } finally {
    await r.close();
  }
});

test("a file edited by hand is put back and its module reloaded", async () => {
  const r = await rig();
  try {
    const first = await r.deployer.deploy(ACME, orgFiles("org_acme_"));
    const again = await r.deployer.deploy(ACME, orgFiles("org_acme_"));
    assert.is(again.revision, first.revision, "an unchanged deploy reports the applied revision");
    await writeFile(join(r.dir, "orgs/org_acme_/pjsip.conf"), "[hand-edited]\n");
    r.ami.received.length = 0;
    const record = await r.deployer.deploy(ACME, orgFiles("org_acme_"));
    assert.equal(record.filesWritten, ["orgs/org_acme_/pjsip.conf"]);
    assert.equal(r.ami.reloadCommands(), ["module reload res_pjsip.so"]);
  } finally {
    await r.close();
  }
});

test("a PJSIP-only change reloads res_pjsip and not the dialplan", async () => {
  const r = await rig();
  try {
    await r.deployer.deploy(ACME, orgFiles("org_acme_"));
    r.ami.received.length = 0;
    const record = await r.deployer.deploy(
      ACME,
      orgFiles("org_acme_", { pjsip: "[org_acme_100]\ntype=endpoint\ncontext=x\n" }),
    );
    assert.equal(record.filesWritten, ["orgs/org_acme_/pjsip.conf"]);
    assert.equal(r.ami.reloadCommands(), ["module reload res_pjsip.so"]);
  } finally {
    await r.close();
  }
});

test("a queue-only change reloads only the named queue", async () => {
  const r = await rig();
  try {
    const queues = "[org_acme_q_5000]\nstrategy=ringall\n\n[org_acme_q_5001]\nstrategy=linear\n";
    await r.deployer.deploy(ACME, orgFiles("org_acme_", { queues }));
    r.ami.received.length = 0;
    const changed = queues.replace("strategy=linear", "strategy=rrmemory");
    await r.deployer.deploy(ACME, orgFiles("org_acme_", { queues: changed }));
    assert.equal(r.ami.reloadCommands(), ["queue reload all org_acme_q_5001"]);
  } finally {
    await r.close();
  }
});

test("files the unit no longer has are removed, other orgs' files untouched", async () => {
  const r = await rig();
  try {
    await r.deployer.deploy(ACME, orgFiles("org_acme_"));
    await r.deployer.deploy(orgUnit("org_globex_"), orgFiles("org_globex_"));
    r.ami.received.length = 0;
    const record = await r.deployer.deploy(ACME, orgFiles("org_acme_").slice(0, 2));
    assert.equal(record.filesRemoved, ["orgs/org_acme_/queues.conf"]);
    assert.equal(r.ami.reloadCommands(), ["queue reload all"]);
    await assert.not.throws(() => stat(join(r.dir, "orgs/org_globex_/queues.conf")));
    let missing = false;
    await stat(join(r.dir, "orgs/org_acme_/queues.conf")).catch(() => {
      missing = true;
    });
    assert.ok(missing);
  } finally {
    await r.close();
  }
});

test("edits to two orgs reload serially, never overlapping", async () => {
  const r = await rig({ reloadDelayMs: 40 });
  try {
    await Promise.all([
      r.deployer.deploy(ACME, orgFiles("org_acme_")),
      r.deployer.deploy(orgUnit("org_globex_"), orgFiles("org_globex_")),
    ]);
    assert.is(r.ami.overlaps, 0);
    const spans = [...r.ami.reloads].sort((a, b) => a.start - b.start);
    assert.ok(spans.length >= 3, `expected reloads, got ${spans.length}`);
    for (let i = 1; i < spans.length; i++) {
      assert.ok(spans[i]!.start >= spans[i - 1]!.end, `reload ${i} started before ${i - 1} ended`);
    }
    // The second org's identical reloads joined the first org's waiting ones where they could.
    assert.ok(r.ami.reloadCommands().filter((c) => c === "dialplan reload").length <= 2);
  } finally {
    await r.close();
  }
});

test("a reload refused as already in progress is retried", async () => {
  const r = await rig();
  try {
    // Only a `module reload` can be refused so (session.json): the PJSIP file alone changes.
    r.ami.refuseNextReloads = 2;
    const record = await r.deployer.deploy(ACME, orgFiles("org_acme_").slice(1, 2));
    assert.is(record.result, "ok");
    assert.is(record.reloads[0]?.attempts, 3);
    assert.equal(r.ami.reloadCommands(), [
      "module reload res_pjsip.so",
      "module reload res_pjsip.so",
      "module reload res_pjsip.so",
    ]);
  } finally {
    await r.close();
  }
});

test("a failed reload keeps the applied revision and the next deploy reloads again", async () => {
  const r = await rig();
  try {
    await r.deployer.deploy(ACME, orgFiles("org_acme_"));
    const good = await r.log.applied("org:org_acme_");
    r.ami.refuseNextReloads = 100;
    const next = orgFiles("org_acme_", { pjsip: "[org_acme_101]\ntype=endpoint\n" });
    const failed = await r.deployer.deploy(ACME, next);
    assert.is(failed.result, "failed");
    assert.is((await r.log.applied("org:org_acme_"))?.revision, good?.revision);
    r.ami.refuseNextReloads = 0;
    r.ami.received.length = 0;
    // Same files again: on disk already, but not loaded: PJSIP is reloaded, nothing written.
    const retry = await r.deployer.deploy(ACME, next);
    assert.is(retry.result, "ok");
    assert.equal(retry.filesWritten, []);
    assert.equal(r.ami.reloadCommands(), ["module reload res_pjsip.so"]);
  } finally {
    await r.close();
  }
});

test("a new org and the include file naming it cost one reload per module", async () => {
  const r = await rig();
  try {
    const top = (prefixes: string[]) =>
      ["extensions.conf", "pjsip.conf", "queues.conf"].map((name) => ({
        path: name,
        content: prefixes.map((p) => `#include "orgs/${p}/${name}"\n`).join(""),
      }));
    await deployTree(r.deployer, [...orgFiles("org_acme_"), ...top(["org_acme_"])]);
    r.ami.received.length = 0;
    const result = await deployTree(r.deployer, [
      ...orgFiles("org_acme_"),
      ...orgFiles("org_globex_"),
      ...top(["org_acme_", "org_globex_"]),
    ]);
    assert.equal(
      result.changed.map((record) => record.unit),
      ["org:org_globex_", "top"],
    );
    assert.equal(r.ami.reloadCommands(), [
      "module reload res_pjsip.so",
      "dialplan reload",
      "queue reload all",
    ]);
    // --prune: an org gone from the tree loses its files, in the same single round of reloads.
    r.ami.received.length = 0;
    const pruned = await deployTree(r.deployer, [...orgFiles("org_acme_"), ...top(["org_acme_"])], {
      prune: true,
    });
    assert.ok(
      pruned.records.some(
        (record) => record.unit === "org:org_globex_" && record.filesRemoved.length === 3,
      ),
    );
    assert.equal(await readdir(join(r.dir, "orgs")), ["org_acme_"]);
    assert.equal(r.ami.reloadCommands(), [
      "module reload res_pjsip.so",
      "dialplan reload",
      "queue reload all",
    ]);
  } finally {
    await r.close();
  }
});

test("rollback restores the previous files and reloads", async () => {
  const r = await rig();
  try {
    const v1 = orgFiles("org_acme_");
    const v2 = orgFiles("org_acme_", {
      dialplan: "[org_acme_internal]\nexten => 999,1,Hangup()\n",
    });
    await r.deployer.deploy(ACME, v1);
    await r.deployer.deploy(ACME, v2);
    r.ami.received.length = 0;
    const record = await r.deployer.rollback(ACME);
    assert.is(record.trigger, "rollback");
    assert.equal(record.filesWritten, ["orgs/org_acme_/extensions.conf"]);
    assert.is(
      await readFile(join(r.dir, "orgs/org_acme_/extensions.conf"), "utf8"),
      v1[0]!.content,
    );
    assert.equal(r.ami.reloadCommands(), ["dialplan reload"]);
    assert.is((await r.log.applied("org:org_acme_"))?.revision, revisionOf(v1));
  } finally {
    await r.close();
  }
});

test("rollback without a previous version is a typed error", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const deployer = new Deployer({
      engineDir: dir,
      target: createNoneTarget(),
      log: new FileDeployLog(dir),
    });
    await deployer.deploy(ACME, orgFiles("org_acme_"));
    try {
      await deployer.rollback(ACME);
      assert.unreachable("rollback should fail");
    } catch (error) {
      assert.instance(error, NoPreviousVersionError);
    }
  } finally {
    await cleanup();
  }
});

test("the none target writes files and records reloads as skipped", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const log = new FileDeployLog(dir);
    const deployer = new Deployer({ engineDir: dir, target: createNoneTarget(), log });
    const record = await deployer.deploy(ACME, orgFiles("org_acme_"));
    assert.is(record.result, "ok");
    assert.ok(record.reloads.every((outcome) => outcome.status === "skipped"));
    assert.is(record.health, undefined);
    const lines = (await readFile(log.logFile, "utf8")).trim().split("\n");
    assert.is(lines.length, 1);
    assert.is(JSON.parse(lines[0]!).unit, "org:org_acme_");
  } finally {
    await cleanup();
  }
});

test("records and snapshots are stamped by the deployer's clock", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    let now = new Date("2026-03-01T09:00:00.000Z");
    const deployer = new Deployer({
      engineDir: dir,
      target: createNoneTarget(),
      log: new FileDeployLog(dir),
      clock: () => now,
    });
    const first = await deployer.deploy(ACME, orgFiles("org_acme_"));
    assert.is(first.startedAt, "2026-03-01T09:00:00.000Z");
    now = new Date("2026-03-01T10:00:00.000Z");
    await deployer.deploy(
      ACME,
      orgFiles("org_acme_", { dialplan: "[org_acme_internal]\nexten => 999,1,Hangup()\n" }),
    );
    assert.is((await readSnapshot(dir, ACME))?.savedAt, "2026-03-01T10:00:00.000Z");
    now = new Date("2026-03-01T11:00:00.000Z");
    const rollback = await deployer.rollback(ACME);
    assert.is(rollback.startedAt, "2026-03-01T11:00:00.000Z");
    assert.is(rollback.restored?.savedAt, "2026-03-01T10:00:00.000Z");
  } finally {
    await cleanup();
  }
});

test("a failed write leaves the org's previous files in place", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const deployer = new Deployer({
      engineDir: dir,
      target: createNoneTarget(),
      log: new FileDeployLog(dir),
    });
    await deployer.deploy(ACME, orgFiles("org_acme_"));
    // A directory where the new file should go makes its rename fail after the first file.
    const v2 = [
      ...orgFiles("org_acme_", { dialplan: "[changed]\n" }),
      { path: "orgs/org_acme_/zz/extra.conf", content: "x" },
    ];
    await writeFile(join(dir, "orgs/org_acme_/zz"), "a file where a directory must go");
    const record = await deployer.deploy(ACME, v2);
    assert.is(record.result, "failed");
    assert.match(record.error ?? "", /previous files kept/);
    const dialplan = await readFile(join(dir, "orgs/org_acme_/extensions.conf"), "utf8");
    assert.is(dialplan, orgFiles("org_acme_")[0]!.content);
  } finally {
    await cleanup();
  }
});

test("files outside the unit are refused", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const deployer = new Deployer({
      engineDir: dir,
      target: createNoneTarget(),
      log: new FileDeployLog(dir),
    });
    assert.throws(
      () => deployer.deploy(ACME, [{ path: "orgs/org_globex_/pjsip.conf", content: "" }]),
      (error: Error) => error instanceof InvalidDeployPathError,
    );
    assert.throws(
      () => deployer.deploy(ACME, [{ path: "orgs/org_acme_/../../etc/passwd", content: "" }]),
      (error: Error) => error instanceof InvalidDeployPathError,
    );
  } finally {
    await cleanup();
  }
});

test.run();
