// The measuring parts report to their instruments: the deploy scheduler (save -> applied, owed
// orgs, failures, retries) and the AMI connection (connected, reconnects, refused actions).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { DeployRecord } from "../../src/deploy/deploy-log.js";
import { OrgDeployScheduler } from "../../src/deploy/scheduler.js";
import { unitId } from "../../src/deploy/units.js";
import { AmiConnection } from "../../src/engine/ami-connection.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import type { AmiInstruments, DeployInstruments } from "../../src/metrics/instruments.js";
import { FakeClock, orgFiles } from "../deploy/helpers.js";
import { eventually } from "../tickets/helpers.js";

function recordingDeploys() {
  const seen: string[] = [];
  const instruments: DeployInstruments = {
    applied: (seconds) => seen.push(`applied ${seconds}`),
    failed: () => seen.push("failed"),
    retried: () => seen.push("retried"),
  };
  return { seen, instruments };
}

test("save -> applied is measured from the first save not yet live, across failures", async () => {
  const clock = new FakeClock();
  const { seen, instruments } = recordingDeploys();
  let fail = false;
  let release: (() => void) | null = null;
  const scheduler = new OrgDeployScheduler({
    deployer: {
      deployUnits: async (groups) => {
        if (release === null) await new Promise<void>((resolve) => (release = resolve));
        return groups.map((g) => ({
          unit: unitId(g.unit),
          result: fail ? "failed" : "ok",
          filesWritten: [],
          filesRemoved: [],
        })) as unknown as DeployRecord[];
      },
    },
    buildOrg: async (orgId) => ({ contextPrefix: orgId, files: orgFiles(orgId) }),
    timers: clock,
    retryDelaysMs: [1000],
    instruments,
  });

  scheduler.scheduleDeploy("org_a_");
  clock.advance(800); // the deploy starts and waits in the deployer
  clock.advance(100);
  scheduler.scheduleDeploy("org_a_"); // a save while it runs
  assert.equal(scheduler.owedDeploys(), { orgs: 1, oldestSeconds: 0.9 });
  await eventually("the deploy is in the deployer", () => release !== null);
  release!();
  await scheduler.idle();
  assert.equal(seen, ["applied 0.9"]);
  // The save made while it ran is still owed, from when it was made.
  assert.equal(scheduler.owedDeploys(), { orgs: 1, oldestSeconds: 0 });

  fail = true;
  clock.advance(800);
  await scheduler.idle();
  assert.equal(seen, ["applied 0.9", "failed"]);
  assert.equal(scheduler.owedDeploys(), { orgs: 1, oldestSeconds: 0.8 });
  fail = false;
  clock.advance(1000);
  await scheduler.idle();
  assert.equal(seen, ["applied 0.9", "failed", "retried", "applied 1.8"]);
  assert.equal(scheduler.owedDeploys(), { orgs: 0, oldestSeconds: 0 });
});

test("the AMI connection reports its state, reconnects and refused actions", async () => {
  const ami = new FakeAmiServer();
  const port = await ami.listen();
  const seen: string[] = [];
  const instruments: AmiInstruments = {
    connected: (up) => seen.push(up ? "up" : "down"),
    reconnected: () => seen.push("reconnected"),
    commandError: (action) => seen.push(`error ${action}`),
  };
  const connection = new AmiConnection({
    host: "127.0.0.1",
    port,
    username: "pbxctl",
    secret: "secret",
    reconnectInitialMs: 10,
    instruments,
  });
  try {
    assert.equal(seen, ["down"], "down until the first login");
    connection.start();
    await connection.ready();
    assert.equal(seen, ["down", "up"]);
    await connection.action({ Action: "Ping" });
    await connection.action({ Action: "Command", Command: "no such thing" });
    assert.equal(seen, ["down", "up", "error Command"]);
    ami.dropConnections();
    // The reconnect waits on real timers (10 ms): look until a deadline, as ami-target.test does.
    const deadline = Date.now() + 3000;
    while (connection.logins < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(seen, ["down", "up", "error Command", "down", "reconnected", "up"]);
  } finally {
    await connection.close();
    await ami.close();
  }
  assert.equal(seen.at(-1), "down");
});

test.run();
