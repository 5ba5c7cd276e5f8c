import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plainProgressFrom } from "../../src/config.js";
import { progressMode, runSteps } from "../../src/deploy/progress.js";
import { type OrgBuild, OrgDeployScheduler } from "../../src/deploy/scheduler.js";
import { unitStatuses } from "../../src/deploy/status.js";
import { orgUnit } from "../../src/deploy/units.js";
import { FakeClock, orgFiles, rig } from "./helpers.js";

test("status shows a revision saved but not live as pending", async () => {
  const r = await rig();
  try {
    await r.deployer.deploy(orgUnit("org_acme_"), orgFiles("org_acme_"));
    let [acme] = await unitStatuses(r.log);
    assert.is(acme?.pending, false);
    assert.is(acme?.health?.status, "healthy");
    r.ami.refuseNextReloads = 100;
    const failed = await r.deployer.deploy(
      orgUnit("org_acme_"),
      orgFiles("org_acme_", { pjsip: "[changed]\ntype=endpoint\n" }),
    );
    [acme] = await unitStatuses(r.log);
    assert.is(acme?.pending, true);
    assert.is(acme?.lastDeploy?.result, "failed");
    assert.is(acme?.lastDeploy?.revision, failed.revision);
    assert.is.not(acme?.appliedRevision, failed.revision);
    // A desired revision from the caller (the store's compile) is compared too.
    const [withDesired] = await unitStatuses(r.log, new Map([["org:org_acme_", "f".repeat(64)]]));
    assert.is(withDesired?.desiredRevision, "f".repeat(64));
    assert.is(withDesired?.pending, true);
  } finally {
    await r.close();
  }
});

test("a deleted org's files are removed by the scheduler; deployNow runs at once", async () => {
  const r = await rig();
  let exists = true;
  try {
    const scheduler = new OrgDeployScheduler({
      deployer: r.deployer,
      timers: new FakeClock(),
      buildOrg: async (): Promise<OrgBuild | null> =>
        exists ? { contextPrefix: "org_acme_", files: orgFiles("org_acme_") } : null,
    });
    const records = await scheduler.deployNow("acme");
    assert.is(records[0]?.result, "ok");
    assert.equal(await readdir(join(r.dir, "orgs")), ["org_acme_"]);
    exists = false;
    const removed = await scheduler.deployNow("acme");
    assert.is(removed[0]?.filesRemoved.length, 3);
    assert.equal(await readdir(join(r.dir, "orgs")), []);
  } finally {
    await r.close();
  }
});

test("progress: a listr2 line on a terminal, nothing in --json or when piped", () => {
  assert.is(progressMode(false, { isTTY: true }, false), "tty");
  assert.is(progressMode(true, { isTTY: true }, true), "silent");
  assert.is(progressMode(false, { isTTY: false }, false), "silent");
  assert.is(progressMode(false, {}, plainProgressFrom({ PBX_PROGRESS: "plain" })), "plain");
  assert.is(plainProgressFrom({}), false);
});

test("progress in plain mode prints one line per step and per report", async () => {
  const lines: string[] = [];
  await runSteps(
    [
      { title: "Load", run: async () => "Loaded 2 org(s)" },
      {
        title: "Deploy",
        run: async (report) => {
          report("1/2 org:a_: ok");
          return undefined;
        },
      },
    ],
    "plain",
    (line) => lines.push(line),
  );
  assert.equal(lines, [
    "Load...",
    "Loaded 2 org(s)",
    "Deploy...",
    "  1/2 org:a_: ok",
    "Deploy: done",
  ]);
  const silent: string[] = [];
  await runSteps([{ title: "Load", run: async () => "x" }], "silent", (line) => silent.push(line));
  assert.equal(silent, []);
});

test.run();
