// On-request deploys through the deployer (src/deploy/deploy-jobs.ts), on fake timers: a replica
// that is not the deployer queues the request and answers with the deployer's outcome (errors of
// the same kind included); with no deployer, it gives up after its wait and withdraws the job.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DeployerUnavailableError, DeployJobs } from "../../src/deploy/deploy-jobs.js";
import { type StoreDeploys, UnknownOrgError } from "../../src/deploy/store-deploys.js";
import { createDeployJobRepository } from "../../src/store/deploy-job-repository.js";
import { freshStore } from "../store/helpers.js";
import { FakeClock } from "./helpers.js";

const T0 = Date.parse("2026-03-01T10:00:00.000Z");

function fakeDeploys(log: string[], who: string): StoreDeploys {
  return {
    async deployOrgNow(orgId: string) {
      log.push(`${who} deploy ${orgId}`);
      if (orgId === "gone") throw new UnknownOrgError("organization gone not found");
      return { orgId, unit: `org:${orgId}_`, record: { result: "ok" }, related: [] };
    },
    async reloadOrg(orgId: string) {
      log.push(`${who} reload ${orgId}`);
      return { unit: `org:${orgId}_`, reloads: [], health: null };
    },
    async regenerateGateway(trigger: string) {
      log.push(`${who} gateway ${trigger}`);
      return { didCount: 2, orgCount: 1, record: { result: "ok" } };
    },
  } as unknown as StoreDeploys;
}

/** Advances `timers` step by step, letting the store calls each step started settle. */
async function drive(timers: FakeClock, until: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !until(); i++) {
    timers.advance(100);
    for (let j = 0; j < 20; j++) await new Promise((resolve) => setImmediate(resolve));
  }
}

test("a request on a replica that is not the deployer is carried out by the deployer and answered with its outcome", async () => {
  const store = await freshStore();
  const timers = new FakeClock();
  const clock = () => new Date(T0 + timers.now());
  const log: string[] = [];
  const make = (id: string) =>
    new DeployJobs({ db: store.db, replicaId: id, deploys: fakeDeploys(log, id), timers, clock });
  const deployer = make("r1");
  const other = make("r2");
  try {
    deployer.startServing();
    assert.equal(await deployer.reloadOrg("a"), { unit: "org:a_", reloads: [], health: null });
    assert.equal(log, ["r1 reload a"], "on the deployer: at once, no job");

    let answer: unknown = null;
    void other.deployOrgNow("b").then((value) => {
      answer = value;
    });
    await drive(timers, () => answer !== null);
    assert.equal(answer, { orgId: "b", unit: "org:b_", record: { result: "ok" }, related: [] });

    let failure: unknown = null;
    void other.deployOrgNow("gone").catch((error: unknown) => {
      failure = error;
    });
    await drive(timers, () => failure !== null);
    assert.instance(failure, UnknownOrgError, "the same error kind (404 at the API)");

    let gateway: unknown = null;
    void other.regenerateGateway("regenerate").then((value) => {
      gateway = value;
    });
    await drive(timers, () => gateway !== null);
    assert.equal(log, ["r1 reload a", "r1 deploy b", "r1 deploy gone", "r1 gateway regenerate"]);
    const left = await store.db.selectFrom("deploy_jobs").select("id").execute();
    assert.equal(left, [], "answered jobs are removed");
  } finally {
    await deployer.stopServing();
    await store.close();
  }
});

test("with no deployer, the request gives up after its wait and is withdrawn, never run later", async () => {
  const store = await freshStore();
  const timers = new FakeClock();
  const clock = () => new Date(T0 + timers.now());
  const log: string[] = [];
  const other = new DeployJobs({
    db: store.db,
    replicaId: "r2",
    deploys: fakeDeploys(log, "r2"),
    timers,
    clock,
    waitMs: 1000,
  });
  try {
    let failure: unknown = null;
    void other.deployOrgNow("b").catch((error: unknown) => {
      failure = error;
    });
    await drive(timers, () => failure !== null);
    assert.instance(failure, DeployerUnavailableError);
    assert.match(String((failure as Error).message), /No deployer took the request within 1 s/);
    assert.equal(await store.db.selectFrom("deploy_jobs").select("id").execute(), []);
    // A deployer arriving afterwards finds nothing to run.
    const late = new DeployJobs({ db: store.db, replicaId: "r1", deploys: fakeDeploys(log, "r1") });
    late.startServing();
    await late.poll();
    await late.stopServing();
    assert.equal(log, []);
  } finally {
    await store.close();
  }
});

test("each engine node's deployer sees only its own jobs; the implicit engine's none of them", async () => {
  const store = await freshStore();
  try {
    const job = (id: string) => ({
      id,
      kind: "deploy-org",
      orgId: null,
      trigger: null,
      requestedBy: "r2",
      at: "2026-03-01T10:00:00.000Z",
    });
    await createDeployJobRepository(store.db, "n1").add(job("j1"));
    await createDeployJobRepository(store.db, "n2").add(job("j2"));
    await createDeployJobRepository(store.db).add(job("j0"));
    const ids = async (nodeId?: string) =>
      (await createDeployJobRepository(store.db, nodeId).unfinished()).map((row) => row.id);
    assert.equal(await ids("n1"), ["j1"]);
    assert.equal(await ids("n2"), ["j2"]);
    assert.equal(await ids(), ["j0"]);
  } finally {
    await store.close();
  }
});

test.run();
