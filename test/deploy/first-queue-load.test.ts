// The first load of the queues (app_queue loaded afresh, no device-state storm) and the start-up
// deploy in batches with one reload for all (src/deploy/first-queue-load.ts, Deployer.deployInBatches).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { AppliedRevision } from "../../src/deploy/deploy-log.js";
import { firstQueueLoad, QUEUES_FRESH_LOAD } from "../../src/deploy/first-queue-load.js";
import { fullReloadOf } from "../../src/deploy/reloads.js";
import { InvalidDeployPathError, orgUnit, type UnitFiles } from "../../src/deploy/units.js";
import { orgFiles, rig } from "./helpers.js";

const applied = (files: string[]): AppliedRevision => ({
  unit: "org:org_a_",
  revision: "r",
  files: Object.fromEntries(files.map((path) => [path, "h"])),
  appliedAt: "2026-11-27T00:00:00.000Z",
  deployId: "d",
});

test("a full queue reload is a fresh load only while no queues file was ever applied", () => {
  const commands = [fullReloadOf("dialplan"), fullReloadOf("queues")];
  assert.equal(firstQueueLoad(commands, []), [fullReloadOf("dialplan"), QUEUES_FRESH_LOAD]);
  assert.equal(firstQueueLoad(commands, [applied(["orgs/org_a_/extensions.conf"])]), [
    fullReloadOf("dialplan"),
    QUEUES_FRESH_LOAD,
  ]);
  // Queues loaded before: app_queue's counters (what leastrecent and fewestcalls go by) stay.
  assert.equal(firstQueueLoad(commands, [applied(["orgs/org_a_/queues.conf"])]), commands);
  assert.equal(firstQueueLoad(commands, [applied(["queues.conf"])]), commands);
  // A queue reloaded by name is never widened.
  const named = [{ module: "queues" as const, command: "queue reload all org_a_q_1" }];
  assert.equal(firstQueueLoad(named, []), named);
});

test("the first deploy of several orgs' queues loads app_queue afresh; later ones reload all", async () => {
  const r = await rig();
  try {
    const records = await r.deployer.deployUnits([
      { unit: orgUnit("org_a_"), files: orgFiles("org_a_") },
      { unit: orgUnit("org_b_"), files: orgFiles("org_b_") },
    ]);
    assert.equal(
      records.map((record) => record.result),
      ["ok", "ok"],
      JSON.stringify(records, null, 1),
    );
    assert.equal(r.ami.reloadCommands(), [
      "module reload res_pjsip.so",
      "dialplan reload",
      "module refresh app_queue.so",
    ]);
    assert.match(records[0]!.reloads.at(-1)?.output ?? "", /Unloaded and loaded app_queue\.so/);
    await r.deployer.deployUnits([
      { unit: orgUnit("org_c_"), files: orgFiles("org_c_") },
      { unit: orgUnit("org_d_"), files: orgFiles("org_d_") },
    ]);
    assert.is(r.ami.reloadCommands().at(-1), "queue reload all");
  } finally {
    await r.close();
  }
});

test("a refused unload (a call in a queue) falls back to reloading every queue", async () => {
  const r = await rig();
  try {
    r.ami.queueInUse = true;
    const records = await r.deployer.deployUnits([
      { unit: orgUnit("org_a_"), files: orgFiles("org_a_") },
      { unit: orgUnit("org_b_"), files: orgFiles("org_b_") },
    ]);
    assert.equal(
      records.map((record) => record.result),
      ["ok", "ok"],
      JSON.stringify(records, null, 1),
    );
    const queues = records[0]!.reloads.at(-1)!;
    assert.is(queues.command, "module refresh app_queue.so");
    assert.match(queues.output ?? "", /Unable to unload resource app_queue\.so/);
    assert.match(queues.output ?? "", /queue reload all/);
    assert.is(r.ami.reloadCommands().at(-1), "queue reload all");
  } finally {
    await r.close();
  }
});

test("a deploy in batches writes each batch, then reloads each module once for all of them", async () => {
  const r = await rig();
  try {
    const prefixes = ["org_a_", "org_b_", "org_c_"];
    async function* batches(): AsyncGenerator<UnitFiles[]> {
      for (const prefix of prefixes) yield [{ unit: orgUnit(prefix), files: orgFiles(prefix) }];
    }
    const records = await r.deployer.deployInBatches(prefixes.map(orgUnit), batches(), {
      trigger: "startup",
    });
    assert.equal(
      records.map((record) => `${record.unit} ${record.result}`),
      prefixes.map((prefix) => `org:${prefix} ok`),
    );
    assert.equal(r.ami.reloadCommands(), [
      "module reload res_pjsip.so",
      "dialplan reload",
      "module refresh app_queue.so",
    ]);
    for (const prefix of prefixes) {
      assert.is(
        (await r.log.applied(`org:${prefix}`))?.revision,
        records.find((x) => x.unit === `org:${prefix}`)?.revision,
      );
    }
  } finally {
    await r.close();
  }
});

test("a deploy in batches refuses a unit it did not name, before that batch writes", async () => {
  const r = await rig();
  try {
    async function* batches(): AsyncGenerator<UnitFiles[]> {
      yield [{ unit: orgUnit("org_b_"), files: orgFiles("org_b_") }];
    }
    const error = await r.deployer.deployInBatches([orgUnit("org_a_")], batches()).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(error, InvalidDeployPathError);
    assert.equal(r.ami.reloadCommands(), []);
  } finally {
    await r.close();
  }
});

test.run();
