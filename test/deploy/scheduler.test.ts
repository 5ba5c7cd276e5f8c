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

/** A scheduler over a recording fake deployer; `failing` orgs' deploys come back failed. */
function recordingScheduler(clock: FakeClock, options: { failing?: Set<string> } = {}) {
  const deployed: string[] = [];
  const port = new OrgDeployScheduler({
    deployer: {
      deployUnits: async (groups) => {
        for (const { unit } of groups) deployed.push(unit.kind === "org" ? unit.prefix : unit.kind);
        return groups.map((g) => ({
          ...fakeRecord(g.unit),
          result: g.unit.kind === "org" && options.failing?.has(g.unit.prefix) ? "failed" : "ok",
        })) as DeployRecord[];
      },
    },
    buildOrg: async (orgId) => ({ contextPrefix: orgId, files: orgFiles(orgId) }),
    timers: clock,
    retryDelaysMs: [1000, 4000],
  });
  return { scheduler: port, deployed };
}

test("through the domain's DeployScheduler port: debounced, one deploy per org per burst", async () => {
  const clock = new FakeClock();
  const { scheduler, deployed } = recordingScheduler(clock);
  const port: Pick<DeployScheduler, "scheduleDeploy"> = scheduler;
  port.scheduleDeploy("org_a_");
  clock.advance(500);
  port.scheduleDeploy("org_b_");
  port.scheduleDeploy("org_a_"); // restarts a's quiet time
  assert.equal(scheduler.pendingOrgs.sort(), ["org_a_", "org_b_"]);
  clock.advance(799);
  await scheduler.idle();
  assert.equal(deployed, [], "nothing before 800 ms of quiet");
  clock.advance(1);
  await scheduler.idle();
  assert.equal(deployed.sort(), ["org_a_", "org_b_"], "each org once, bursts coalesced");
  assert.equal(scheduler.pendingOrgs, []);
  assert.is(clock.pendingTimers, 0);
});

test("deployNow cancels the pending debounce, so a burst then an explicit deploy is one deploy", async () => {
  const clock = new FakeClock();
  const { scheduler, deployed } = recordingScheduler(clock);
  scheduler.scheduleDeploy("org_a_");
  scheduler.scheduleDeploy("org_a_");
  const records = await scheduler.deployNow("org_a_");
  assert.equal(
    records.map((r) => r.unit),
    ["org:org_a_"],
  );
  clock.advance(10_000);
  await scheduler.idle();
  assert.equal(deployed, ["org_a_"]);
});

test("a failing org backs off on the injected clock (1 s, then 4 s repeating) and counts failures", async () => {
  const clock = new FakeClock();
  const failing = new Set(["org_bad_"]);
  const { scheduler, deployed } = recordingScheduler(clock, { failing });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await scheduler.idle();
  };
  scheduler.scheduleDeploy("org_bad_");
  clock.advance(800);
  await settle();
  assert.is(scheduler.failureCount("org_bad_"), 1);
  clock.advance(999);
  await settle();
  assert.is(deployed.length, 1, "no retry before the first backoff");
  clock.advance(1);
  await settle();
  assert.is(deployed.length, 2);
  assert.is(scheduler.failureCount("org_bad_"), 2);
  clock.advance(3999);
  await settle();
  assert.is(deployed.length, 2, "the second backoff is longer");
  clock.advance(1);
  await settle();
  assert.is(deployed.length, 3);
  clock.advance(4000);
  await settle();
  assert.is(deployed.length, 4, "the last delay repeats");
  failing.clear();
  clock.advance(4000);
  await settle();
  assert.is(scheduler.failureCount("org_bad_"), 0, "a success resets the count");
  assert.equal(scheduler.pendingOrgs, []);
  await scheduler.stop({ flush: false });
});

test("stop({ flush: false }) drops pending deploys and cancels their timers", async () => {
  const clock = new FakeClock();
  const { scheduler, deployed } = recordingScheduler(clock);
  scheduler.scheduleDeploy("org_a_");
  await scheduler.stop({ flush: false });
  clock.advance(10_000);
  await scheduler.idle();
  assert.equal(deployed, []);
  assert.is(clock.pendingTimers, 0);
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

test.run();
