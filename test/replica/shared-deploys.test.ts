// Two servers on one store, in one process, with the engine side on fake clocks: a save through
// the replica that is not the deployer goes live through the one that is (it polls the store's
// deploy requests), and when the deployer stops renewing its lease the other takes the role and
// deploys what was saved meanwhile. The process-level version (three built `pbxctl serve`, SIGKILL)
// is test/replicas/three-replicas.test.ts.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type RunningServer, startServer } from "../../src/api/server.js";
import { loadConfig } from "../../src/config.js";
import { SharedDeploys } from "../../src/deploy/shared-deploys.js";
import { createDeployRequestRepository } from "../../src/store/deploy-request-repository.js";
import { insertEngineNode, savePlacement } from "../../src/store/engine-node-repository.js";
import { FakeClock } from "../deploy/helpers.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { freshStoreLocation } from "../store/test-database.js";

const PASSWORD = "shared-deploys-password";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");

interface Replica {
  server: RunningServer;
  /** The engine side's debounce and poll timers. */
  engineClock: FakeClock;
}

test("a save through any replica goes live; a dead deployer's role and saves are taken over", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-shared-deploys-"));
  // Lease time: one clock for both, as replicas share the wall clock.
  const leaseTimers = new FakeClock();
  const wall = () => new Date(T0 + leaseTimers.now());
  const logger = pino({ level: "silent" });
  // The data dir's SQLite file, or on npm run test:pg a fresh PostgreSQL database.
  const store = await freshStoreLocation(join(dataDir, "pbx.db"));
  const storeEnv: Record<string, string> =
    store.location.kind === "postgres" ? { PBX_DATABASE_URL: store.location.url } : {};
  const start = async (name: string): Promise<Replica> => {
    const config = loadConfig(
      { ...storeEnv, PBX_ADMIN_PASSWORD: PASSWORD, PBX_REPLICA_ID: name },
      { dataDir, port: 0, host: "127.0.0.1" },
    );
    const engineClock = new FakeClock();
    const server = await startServer({
      config,
      logger,
      env: {},
      engineOptions: { timers: engineClock },
      roleOptions: { timers: leaseTimers, clock: wall },
    });
    await server.ready;
    return { server, engineClock };
  };
  const a = await start("a");
  const b = await start("b");
  try {
    assert.equal(a.server.roles.held(), ["deployer:files", "ticket-poller", "retention"]);
    assert.equal(b.server.roles.held(), []);
    const request = async (
      replica: Replica,
      method: string,
      path: string,
      headers = {},
      body?: unknown,
    ) => {
      const res = await fetch(`${replica.server.url}${path}`, {
        method,
        headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
      return { status: res.status, body: (await res.json()) as any };
    };
    const auth = await request(
      b,
      "POST",
      "/api/v1/admin/auth",
      {},
      {
        admin_username: "admin",
        admin_password: PASSWORD,
      },
    );
    const org = await request(
      b,
      "POST",
      "/api/v1/organizations",
      {
        authorization: `Bearer ${auth.body.token}`,
      },
      { name: "Acme" },
    );
    assert.is(org.status, 201);
    const headers = { "x-api-key": org.body.api_key };
    const pjsip = () => {
      const file = join(dataDir, "asterisk", "orgs", org.body.context_prefix, "pjsip.conf");
      return existsSync(file) ? readFileSync(file, "utf8") : "";
    };
    const endpoint = (ext: string) => `[${org.body.context_prefix}${ext}]`;

    // Saved through b, which does not deploy: a's poll finds it, its debounce deploys it.
    assert.is(
      (await request(b, "POST", "/api/v1/users", headers, { extension: "100", name: "Ann" }))
        .status,
      201,
    );
    assert.not.ok(pjsip().includes(endpoint("100")));
    assert.ok(await b.server.deployRequests.requested(org.body.id), "pending in the store");
    await a.server.deployRequests.poll();
    a.engineClock.advance(800);
    await a.server.engine!.deploys.scheduler.idle();
    assert.ok(pjsip().includes(endpoint("100")), pjsip());
    assert.not.ok(await b.server.deployRequests.requested(org.body.id), "done once deployed");
    const status = await request(b, "GET", "/api/v1/config/status", headers);
    assert.is(status.body.live, true);
    assert.is(status.body.deploy_scheduled, false);

    // On-request deploys go to the deployer too: one asked of b is carried out by a (b's own
    // deploys are never used for it) and b answers with a's outcome.
    b.server.engine!.deploys.deployOrgNow = () => Promise.reject(new Error("b must not deploy"));
    const ranOnA: string[] = [];
    const deployOnA = a.server.engine!.deploys.deployOrgNow.bind(a.server.engine!.deploys);
    a.server.engine!.deploys.deployOrgNow = (orgId) => {
      ranOnA.push(orgId);
      return deployOnA(orgId);
    };
    const onRequest = await request(b, "POST", "/api/v1/config/deploy", headers);
    assert.is(onRequest.status, 200, JSON.stringify(onRequest.body));
    assert.is(onRequest.body.success, true);
    assert.is(onRequest.body.org_id, org.body.id);
    assert.equal(ranOnA, [org.body.id], "carried out by the deployer");
    const regenerated = await request(
      b,
      "POST",
      `/api/v1/organizations/${org.body.id}/regenerate`,
      headers,
    );
    assert.is(regenerated.status, 200, "regenerate: the same path");
    assert.equal(ranOnA, [org.body.id, org.body.id]);
    const reload = await request(b, "POST", "/api/v1/config/reload", headers);
    assert.is(reload.status, 200, JSON.stringify(reload.body));

    // a stops renewing (as a killed process would); a save through b waits in the store...
    (a.server.roles as unknown as { running: boolean }).running = false;
    assert.is(
      (await request(b, "POST", "/api/v1/users", headers, { extension: "101", name: "Bob" }))
        .status,
      201,
    );
    leaseTimers.advance(3000);
    await b.server.roles.tick();
    assert.equal(b.server.roles.held(), [], "a's lease has not run out yet");
    // ...until the lease runs out: b takes the roles and deploys what differs.
    leaseTimers.advance(1000);
    await b.server.roles.tick();
    await b.server.roles.idle();
    assert.equal(b.server.roles.held(), ["deployer:files", "ticket-poller", "retention"]);
    // The takeover deploy runs in the background (the role does not wait for it).
    for (let i = 0; i < 200 && (await b.server.deployRequests.requested(org.body.id)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(pjsip().includes(endpoint("101")), "the takeover deployed the pending save");
    assert.not.ok(await b.server.deployRequests.requested(org.body.id), "and marked it done");

    // From now on b deploys its own saves at once (no poll needed).
    assert.is(
      (await request(b, "POST", "/api/v1/users", headers, { extension: "102", name: "Cy" })).status,
      201,
    );
    b.engineClock.advance(800);
    await b.server.engine!.deploys.scheduler.idle();
    assert.ok(pjsip().includes(endpoint("102")));
  } finally {
    await b.server.close();
    await a.server.close().catch(() => {});
    await store.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a save's deploy request commits with the save: none for a rolled-back one", async () => {
  const store = await freshStore();
  const shared = new SharedDeploys({ db: store.db, replicaId: "r1", clock: () => new Date(T0) });
  const requests = createDeployRequestRepository(store.db);
  const org = "33333333-3333-4333-8333-333333333333";
  try {
    await insertOrg(store.db, org);
    await store.db
      .transaction()
      .execute(async (trx) => {
        await shared.recordDeploy(trx, org);
        throw new Error("the save failed after recording");
      })
      .catch(() => {});
    assert.not.ok(await requests.isPending(org), "a rolled-back save leaves no request");

    // A crash between the commit and anything after it cannot lose the request: it is in the
    // save's transaction, committed or not with it.
    await store.db.transaction().execute(async (trx) => {
      await trx.updateTable("organizations").set({ name: "Saved" }).where("id", "=", org).execute();
      await shared.recordDeploy(trx, org);
    });
    assert.equal(await requests.pending(), [{ orgId: org, seq: 1, requestedBy: "r1" }]);
    // Not the deployer: scheduling after the commit does nothing here, the request stays pending.
    shared.scheduleDeploy(org);
    assert.ok(await requests.isPending(org));
  } finally {
    await store.close();
  }
});

test("a node's deployer takes and closes only the requests of orgs placed on it", async () => {
  const store = await freshStore();
  const at = new Date(T0).toISOString();
  const a = "aaaaaaaa-3333-4333-8333-33333333333a";
  const b = "bbbbbbbb-3333-4333-8333-33333333333b";
  try {
    for (const [org, name] of [
      [a, "A"],
      [b, "B"],
    ] as const) {
      await insertOrg(store.db, org, name, `org_${name}_`);
    }
    for (const node of ["n1", "n2"]) {
      await insertEngineNode(store.db, {
        id: node,
        name: node,
        ami_host: "127.0.0.1",
        ami_port: 5038,
        ami_username: "pbxctl",
        ami_secret_sealed: "sealed",
        sip_address: "127.0.0.1",
        capacity: 10,
        state: "active",
        created_at: at,
        updated_at: at,
      });
    }
    await savePlacement(store.db, {
      org_id: a,
      node_id: "n1",
      standby_node_id: null,
      pinned: 0,
      placed_at: at,
    });
    await savePlacement(store.db, {
      org_id: b,
      node_id: "n2",
      standby_node_id: null,
      pinned: 0,
      placed_at: at,
    });
    const requests = createDeployRequestRepository(store.db);
    await requests.request(a, "r1", at);
    await requests.request(b, "r1", at);
    assert.equal(
      (await requests.pending("n1")).map((r) => r.orgId),
      [a],
      "node n1 sees A's request only",
    );
    // n1 deploys B too (B moved away from it: the deploy removes B's files) but closes nothing
    // of B's: only n2's deploy of B does.
    const n1 = new SharedDeploys({ db: store.db, replicaId: "r1", nodeId: "n1" });
    await n1.buildStarting(b);
    await n1.deployed(b, true);
    assert.ok(await requests.isPending(b), "B's request left for its own node");
    await n1.buildStarting(a);
    await n1.deployed(a, true);
    assert.not.ok(await requests.isPending(a), "A's request closed by its node");
    const n2 = new SharedDeploys({ db: store.db, replicaId: "r1", nodeId: "n2" });
    await n2.buildStarting(b);
    await n2.deployed(b, true);
    assert.not.ok(await requests.isPending(b));
  } finally {
    await store.close();
  }
});

test("a warm standby: the org's request is pending for its primary and its standby until both deployed", async () => {
  const store = await freshStore();
  const at = new Date(T0).toISOString();
  const a = "aaaaaaaa-4444-4444-8444-44444444444a";
  try {
    await insertOrg(store.db, a, "A", "org_A_");
    for (const node of ["n1", "n2", "n3"]) {
      await insertEngineNode(store.db, {
        id: node,
        name: node,
        ami_host: "127.0.0.1",
        ami_port: 5038,
        ami_username: "pbxctl",
        ami_secret_sealed: "sealed",
        sip_address: "127.0.0.1",
        capacity: 10,
        state: "active",
        created_at: at,
        updated_at: at,
      });
    }
    await savePlacement(store.db, {
      org_id: a,
      node_id: "n1",
      standby_node_id: "n2",
      pinned: 1,
      placed_at: at,
    });
    const requests = createDeployRequestRepository(store.db);
    await requests.request(a, "r1", at);
    const pendingOn = async (node: string) => (await requests.pending(node)).map((r) => r.orgId);
    assert.equal(await pendingOn("n1"), [a]);
    assert.equal(await pendingOn("n2"), [a], "the standby deploys the org too");
    assert.equal(await pendingOn("n3"), [], "a third node never sees it");

    // The primary's deploy (possibly on another replica than the standby's) closes it for the
    // primary only: the standby's deployer still finds it at its next poll.
    const n1 = new SharedDeploys({ db: store.db, replicaId: "r1", nodeId: "n1" });
    await n1.buildStarting(a);
    await n1.deployed(a, true);
    assert.equal(await pendingOn("n1"), []);
    assert.equal(await pendingOn("n2"), [a], "not lost to the standby");
    assert.ok(await requests.isPending(a), "the org's request is open while a node owes it");
    const n2 = new SharedDeploys({ db: store.db, replicaId: "r2", nodeId: "n2" });
    await n2.buildStarting(a);
    await n2.deployed(a, true);
    assert.equal(await pendingOn("n2"), []);
    assert.not.ok(await requests.isPending(a), "closed once both nodes deployed it");

    // A save after the standby is cleared is the primary's alone again.
    await savePlacement(store.db, {
      org_id: a,
      node_id: "n1",
      standby_node_id: null,
      pinned: 1,
      placed_at: at,
    });
    await requests.request(a, "r1", at);
    assert.equal(await pendingOn("n2"), []);
    await n1.buildStarting(a);
    await n1.deployed(a, true);
    assert.not.ok(await requests.isPending(a));
  } finally {
    await store.close();
  }
});

test.run();
