import { test } from "uvu";
import * as assert from "uvu/assert";
import type { DeployRecord } from "../../src/deploy/deploy-log.js";
import { type OrgBuild, OrgDeployScheduler } from "../../src/deploy/scheduler.js";
import { type DeployUnit, unitId } from "../../src/deploy/units.js";
import type { DeployScheduler } from "../../src/domain/ports.js";
import { FakeClock, orgFiles, rig } from "./helpers.js";

function fakeRecord(unit: DeployUnit): DeployRecord {
  return { unit: unitId(unit), result: "ok", filesWritten: [], filesRemoved: [] } as never;
}

/** An org whose dialplan says how many edits were made, so every edit changes a file. */
function editableOrg(prefix: string) {
  let edits = 0;
  let dids = ["+14155550100"];
  return {
    edit() {
      edits++;
    },
    setDids(next: string[]) {
      dids = next;
      edits++;
    },
    build: async (): Promise<OrgBuild> => ({
      contextPrefix: prefix,
      files: orgFiles(prefix, {
        dialplan: `[${prefix}internal]\n; edit ${edits} dids ${dids.join(" ")}\n`,
      }),
      dids,
    }),
  };
}

test("the scheduler implements the domain's DeployScheduler port", () => {
  const port: DeployScheduler = new OrgDeployScheduler({
    deployer: { deployUnits: async () => [] as DeployRecord[] },
    buildOrg: async () => null,
  });
  assert.type(port.scheduleDeploy, "function");
});

test("50 edits to one org inside 2 s cause exactly one dialplan reload", async () => {
  const r = await rig();
  const clock = new FakeClock();
  const org = editableOrg("org_acme_");
  try {
    // The first deploy loads everything; the burst below must then cost one dialplan reload.
    await r.deployer.deploy({ kind: "org", prefix: "org_acme_" }, (await org.build()).files);
    r.ami.received.length = 0;
    const scheduler = new OrgDeployScheduler({
      deployer: r.deployer,
      buildOrg: org.build,
      timers: clock,
    });
    for (let i = 0; i < 50; i++) {
      if (i > 0) clock.advance(40); // 50 edits within 2000 ms (the last at 1960 ms)
      org.edit();
      scheduler.scheduleDeploy("acme");
    }
    await scheduler.idle();
    assert.equal(r.ami.reloadCommands(), [], "nothing deployed while the burst goes on");
    clock.advance(799);
    await scheduler.idle();
    assert.equal(r.ami.reloadCommands(), [], "not before 800 ms after the last edit");
    clock.advance(1);
    await scheduler.idle();
    assert.equal(r.ami.reloadCommands(), ["dialplan reload"]);
    const records = await r.log.recent({ unit: "org:org_acme_", limit: 1 });
    assert.match(records[0]!.trigger, "schedule");
  } finally {
    await r.close();
  }
});

test("a burst longer than 5 s deploys 5 s after its first edit", async () => {
  const deployedAt: number[] = [];
  const clock = new FakeClock();
  const scheduler = new OrgDeployScheduler({
    deployer: {
      deployUnits: async (groups) => {
        deployedAt.push(clock.now());
        return groups.map((g) => fakeRecord(g.unit));
      },
    },
    buildOrg: async () => ({ contextPrefix: "org_acme_", files: orgFiles("org_acme_") }),
    timers: clock,
  });
  for (let i = 0; i < 30; i++) {
    scheduler.scheduleDeploy("acme");
    clock.advance(250);
    await scheduler.idle();
  }
  assert.equal(deployedAt, [5000]);
  await scheduler.stop({ flush: false });
});

test("deploys of different orgs are independent; a failing build is reported, not thrown", async () => {
  const clock = new FakeClock();
  const errors: string[] = [];
  const deployed: string[] = [];
  const scheduler = new OrgDeployScheduler({
    deployer: {
      deployUnits: async (groups) => {
        for (const { unit } of groups) deployed.push(unit.kind === "org" ? unit.prefix : unit.kind);
        return groups.map((g) => fakeRecord(g.unit));
      },
    },
    buildOrg: async (orgId) => {
      if (orgId === "broken") throw new Error("compile failed");
      return { contextPrefix: `org_${orgId}_`, files: orgFiles(`org_${orgId}_`) };
    },
    timers: clock,
    onError: (orgId, error) => errors.push(`${orgId}: ${error.message}`),
  });
  assert.not.throws(() => scheduler.scheduleDeploy("broken"));
  scheduler.scheduleDeploy("acme");
  clock.advance(800);
  await scheduler.idle();
  assert.equal(deployed, ["org_acme_"]);
  assert.equal(errors, ["broken: compile failed"]);
});

test("a DID change regenerates the gateway after the org's deploy", async () => {
  const r = await rig();
  const clock = new FakeClock();
  const org = editableOrg("org_acme_");
  let gatewayRuns = 0;
  try {
    const scheduler = new OrgDeployScheduler({
      deployer: r.deployer,
      buildOrg: org.build,
      timers: clock,
      regenerateGateway: async () => {
        gatewayRuns++;
      },
    });
    scheduler.scheduleDeploy("acme"); // first deploy: files change, DIDs unknown before
    clock.advance(800);
    await scheduler.idle();
    assert.is(gatewayRuns, 1);
    org.edit(); // a change that keeps the DIDs
    scheduler.scheduleDeploy("acme");
    clock.advance(800);
    await scheduler.idle();
    assert.is(gatewayRuns, 1);
    org.setDids(["+14155550100", "+919876543210"]);
    scheduler.scheduleDeploy("acme");
    clock.advance(800);
    await scheduler.idle();
    assert.is(gatewayRuns, 2);
  } finally {
    await r.close();
  }
});

test("stop() flushes pending deploys, then refuses new ones", async () => {
  const clock = new FakeClock();
  const deployed: string[] = [];
  const errors: string[] = [];
  const scheduler = new OrgDeployScheduler({
    deployer: {
      deployUnits: async (groups) => {
        for (const { unit } of groups) deployed.push(unit.kind === "org" ? unit.prefix : unit.kind);
        return groups.map((g) => fakeRecord(g.unit));
      },
    },
    buildOrg: async (orgId) => ({ contextPrefix: `org_${orgId}_`, files: [] }),
    timers: clock,
    onError: (_orgId, error) => errors.push(error.message),
  });
  scheduler.scheduleDeploy("acme");
  await scheduler.stop();
  assert.equal(deployed, ["org_acme_"]);
  assert.is(clock.pendingTimers, 0);
  scheduler.scheduleDeploy("globex");
  assert.is(errors.length, 1);
  assert.equal(scheduler.pendingOrgs, []);
});

test.run();

test("a failed deploy is retried with backoff until the engine takes it, then no more", async () => {
  const clock = new FakeClock();
  const org = editableOrg("org_retry_");
  let attempts = 0;
  const failFirst = 3;
  const scheduler = new OrgDeployScheduler({
    deployer: {
      deployUnits: async (groups) => {
        attempts++;
        return groups.map((group) => ({
          ...fakeRecord(group.unit),
          result: attempts <= failFirst ? "failed" : "ok",
          error: attempts <= failFirst ? "engine not ready" : undefined,
        })) as DeployRecord[];
      },
    },
    buildOrg: org.build,
    timers: clock,
    retryDelaysMs: [1000, 2000, 5000],
  });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await scheduler.idle();
  };
  scheduler.scheduleDeploy("retry");
  clock.advance(800);
  await settle();
  assert.is(attempts, 1);
  assert.is(scheduler.failureCount("retry"), 1);
  assert.equal(scheduler.pendingOrgs, ["retry"], "a retry is pending, so status shows it");
  clock.advance(999);
  await settle();
  assert.is(attempts, 1, "not before the first backoff");
  clock.advance(1);
  await settle();
  assert.is(attempts, 2);
  clock.advance(2000);
  await settle();
  assert.is(attempts, 3);
  clock.advance(4999);
  await settle();
  assert.is(attempts, 3);
  clock.advance(1);
  await settle();
  assert.is(attempts, 4, "the fourth try succeeds");
  assert.is(scheduler.failureCount("retry"), 0);
  assert.equal(scheduler.pendingOrgs, []);
  clock.advance(120_000);
  await settle();
  assert.is(attempts, 4, "nothing more after a success");
});

test("a new edit replaces a pending retry (one deploy, not two)", async () => {
  const clock = new FakeClock();
  const org = editableOrg("org_retry2_");
  let attempts = 0;
  const scheduler = new OrgDeployScheduler({
    deployer: {
      deployUnits: async (groups) => {
        attempts++;
        return groups.map((g) => ({
          ...fakeRecord(g.unit),
          result: attempts === 1 ? "failed" : "ok",
        })) as DeployRecord[];
      },
    },
    buildOrg: org.build,
    timers: clock,
    retryDelaysMs: [1000],
  });
  scheduler.scheduleDeploy("o");
  clock.advance(800);
  await scheduler.idle();
  await scheduler.idle();
  scheduler.scheduleDeploy("o"); // an edit before the retry fires
  clock.advance(1000);
  await scheduler.idle();
  await scheduler.idle();
  assert.is(attempts, 2);
});
