// `serve` with a SIP edge (PBX_EDGE_DIR): the edge-sync lease holder pushes every change that
// moves routing to the edge (a fake JSON-RPC edge, test/deploy/fake-edge.ts), debounced, one push
// at a time, retried while the edge is down, and what the edge took is in the store for
// `pbxctl status`; the edge's shared memory is in /metrics. A reload the edge refuses as too soon
// after the last one (the fake limits reloads as Kamailio does, on the test's clock) is waited out
// by the push, not reported as a failure. Timers and lease clocks are fakes: nothing here sleeps.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type RunningServer, startServer } from "../../src/api/server.js";
import Status, { type StatusCommandResult } from "../../src/cli/commands/status.js";
import { loadConfig } from "../../src/config.js";
import { EDGE_RELOAD_WAIT_MS } from "../../src/deploy/edge-reload.js";
import { EDGE_SYNC_ROLE, EdgeSync, edgeStatus } from "../../src/deploy/edge-sync.js";
import { createEngineNode } from "../../src/domain/nodes/engine-nodes.js";
import { LeaseLostError } from "../../src/replica/roles.js";
import { createEdgeSyncRepository } from "../../src/store/edge-sync-repository.js";
import { type CommandOutput, runCommand } from "../cli/run-command.js";
import { Scrape } from "../metrics/scrape.js";
import { freshStoreLocation } from "../store/test-database.js";
import { type FakeEdge, REAL_SHMMEM, startFakeEdge } from "./fake-edge.js";
import { FakeClock, untilArmed } from "./helpers.js";

const PASSWORD = "edge-sync-password";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");

interface Rig {
  server: RunningServer;
  sync: EdgeSync;
  edge: FakeEdge;
  edgeDir: string;
  timers: FakeClock;
  config: ReturnType<typeof loadConfig>;
  request(
    method: string,
    path: string,
    headers?: object,
    body?: unknown,
  ): Promise<{
    status: number;
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
    body: any;
  }>;
  admin: Record<string, string>;
  /** Lets due timers run, then waits for the push they started. */
  advance(ms: number): Promise<void>;
  /**
   * Lets due timers run, then waits until the push they started waits out a rate-limited reload
   * (its retry timer armed), which no time passes for unless the test advances it.
   */
  advanceToReloadWait(ms: number): Promise<void>;
  /** `pbxctl status --data-dir` with the server's edge environment. */
  status(): Promise<CommandOutput<Promise<StatusCommandResult>>>;
}

async function withEdgeServer(body: (rig: Rig) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-edge-sync-"));
  const edgeDir = join(dataDir, "edge");
  const timers = new FakeClock();
  // The edge's clock is the sync's: its reload rate limit runs on the same fake time.
  const edge = await startFakeEdge(edgeDir, { now: () => T0 + timers.now() });
  const leaseTimers = new FakeClock();
  const store = await freshStoreLocation(join(dataDir, "pbx.db"));
  const storeEnv: Record<string, string> =
    store.location.kind === "postgres" ? { PBX_DATABASE_URL: store.location.url } : {};
  const edgeEnv = {
    PBX_EDGE_DIR: edgeDir,
    PBX_EDGE_RPC_PORT: String(edge.port),
    PBX_EDGE_CARRIERS: "192.0.2.10",
  };
  const config = loadConfig(
    { ...storeEnv, ...edgeEnv, PBX_ADMIN_PASSWORD: PASSWORD, PBX_REPLICA_ID: "r1" },
    { dataDir, port: 0, host: "127.0.0.1" },
  );
  const server = await startServer({
    config,
    logger: pino({ level: "silent" }),
    env: {},
    engineOptions: { timers },
    roleOptions: { timers: leaseTimers, clock: () => new Date(T0 + leaseTimers.now()) },
  });
  try {
    await server.ready;
    const request: Rig["request"] = async (method, path, headers = {}, payload) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          ...(headers as Record<string, string>),
          ...(payload ? { "content-type": "application/json" } : {}),
        },
        ...(payload ? { body: JSON.stringify(payload) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
    const auth = await request(
      "POST",
      "/api/v1/admin/auth",
      {},
      { admin_username: "admin", admin_password: PASSWORD },
    );
    const sync = server.edgeSync!;
    await body({
      server,
      sync,
      edge,
      edgeDir,
      timers,
      config,
      request,
      admin: { authorization: `Bearer ${auth.body.token}` },
      async advance(ms) {
        timers.advance(ms);
        await sync.idle();
      },
      async advanceToReloadWait(ms) {
        timers.advance(ms);
        const retryAt = timers.now() + EDGE_RELOAD_WAIT_MS;
        await untilArmed(() => timers.dueTimes.includes(retryAt));
      },
      async status() {
        const env = { ...storeEnv, ...edgeEnv, PBX_ENGINE: "none" };
        const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
        Object.assign(process.env, env);
        try {
          return await runCommand(Status, ["--data-dir", dataDir]);
        } finally {
          for (const [key, value] of Object.entries(saved)) {
            if (value === undefined) delete process.env[key];
            else process.env[key] = value;
          }
        }
      },
    });
  } finally {
    await server.close();
    await edge.close();
    await store.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const NODE = { ami_username: "pbxctl", ami_secret: "secret", capacity: 10 };

test("every change that moves routing reaches the edge, debounced, read back, recorded", async () => {
  await withEdgeServer(async (rig) => {
    assert.ok(rig.server.roles.held().includes(EDGE_SYNC_ROLE), "a lone server takes the role");
    const node1 = await rig.request("POST", "/api/v1/admin/engine-nodes", rig.admin, {
      ...NODE,
      name: "node-1",
      sip_address: "127.0.0.11:5060",
    });
    assert.is(node1.status, 201, JSON.stringify(node1.body));
    const org = await rig.request("POST", "/api/v1/organizations", rig.admin, { name: "Acme" });
    assert.is(org.status, 201);
    const prefix: string = org.body.context_prefix;
    const orgKey = { "x-api-key": org.body.api_key };

    // The start-up push (the role's first term) happened at once; the node and the org came
    // after it: the org's save is this replica's own (scheduled at once, debounced 800 ms).
    await rig.advance(0);
    await rig.sync.poll();
    await rig.advance(799);
    const before = rig.edge.calls.length;
    await rig.advance(1);
    assert.ok(rig.edge.calls.length > before, "pushed once the debounce ran out");
    assert.is(rig.edge.htables.orgs.get(prefix), "1", "the org routes to node-1's set");
    assert.match(readFileSync(join(rig.edgeDir, "dispatcher.list"), "utf8"), "127.0.0.11:5060");
    assert.ok(rig.edge.calls.includes("dispatcher.reload"), "the new node was loaded");
    let status = await edgeStatus(rig.server.pbx.deps.db, rig.config.edge!);
    assert.is(status.state, "OK", JSON.stringify(status));
    assert.is(status.appliedRevision, status.wantedRevision);
    assert.is(status.pendingChanges, 0);

    // The org's own number (`source: org`) never reaches the DID table: the node's gateway does
    // not dispatch it (it comes over the org's own trunk), so the edge does not route it.
    const own = await rig.request("POST", "/api/v1/dids", orgKey, { number: "+14155550100" });
    assert.is(own.status, 201, JSON.stringify(own.body));
    await rig.advance(800);
    assert.is(rig.edge.htables.dids.size, 0, "an own number is not routed by the edge");
    // A pool number assigned to the org through the API: in the DID table after one debounce,
    // nothing before it.
    const pooled = await rig.request("POST", "/api/v1/did-pool/admin", rig.admin, {
      number: "+918065978001",
    });
    assert.is(pooled.status, 201, JSON.stringify(pooled.body));
    const asked = await rig.request("POST", `/api/v1/did-pool/${pooled.body.id}/request`, orgKey);
    assert.is(asked.status, 201, JSON.stringify(asked.body));
    await rig.advance(800);
    assert.is(rig.edge.htables.dids.size, 0, "requested, not yet assigned: not routed");
    const approved = await rig.request(
      "POST",
      `/api/v1/did-pool/admin/requests/${asked.body.id}/approve`,
      rig.admin,
    );
    assert.is(approved.status, 200, JSON.stringify(approved.body));
    const calls = rig.edge.calls.length;
    await rig.advance(500);
    assert.is(rig.edge.calls.length, calls, "still within the debounce");
    await rig.advance(300);
    assert.is(rig.edge.htables.dids.get("+918065978001"), prefix);
    assert.is(rig.edge.htables.dids.get("08065978001"), prefix, "every alias");
    assert.ok(
      rig.edge.calls.includes(`htable.sets dids +918065978001 ${prefix}`),
      "only differing keys are sent",
    );
    assert.not.ok(
      rig.edge.calls.slice(calls).includes("dispatcher.reload"),
      "nodes unchanged: no dispatcher reload",
    );

    // A node added by another process (pbxctl nodes add): found by the poll of the requests.
    const deps = {
      db: rig.server.pbx.deps.db,
      config: rig.config,
      clock: () => new Date(T0),
    };
    // It comes 3.2 s after node-1's push reloaded the dispatcher: Kamailio refuses a second
    // reload within its reload_delta (5 s), so the push waits that out and retries; meanwhile the
    // change is PENDING, never FAILED.
    await createEngineNode(deps, { ...NODE, name: "node-2", sip_address: "127.0.0.12:5060" });
    await rig.sync.poll();
    const reloads = () => rig.edge.calls.filter((call) => call === "dispatcher.reload").length;
    const reloadsBefore = reloads();
    await rig.advanceToReloadWait(800);
    assert.is(reloads(), reloadsBefore + 1, "the reload was refused once");
    status = await edgeStatus(rig.server.pbx.deps.db, rig.config.edge!);
    assert.equal([status.state, status.error], ["PENDING", null], JSON.stringify(status));
    rig.timers.advance(EDGE_RELOAD_WAIT_MS - 1);
    assert.ok(rig.timers.dueTimes.includes(rig.timers.now() + 1), "the retry waits the delta out");
    await rig.advance(1);
    assert.is(reloads(), reloadsBefore + 2, "retried once");
    assert.is(rig.sync.outcome?.ok, true, rig.sync.outcome?.error ?? "");
    assert.match(readFileSync(join(rig.edgeDir, "dispatcher.list"), "utf8"), "127.0.0.12:5060");
    status = await edgeStatus(rig.server.pbx.deps.db, rig.config.edge!);
    assert.equal([status.state, status.error], ["OK", null]);

    // The edge is down while the org is pinned to node-2: the push fails, is recorded, and is
    // retried with backoff until the edge is back; the change stays owed in the store meanwhile.
    await rig.edge.down();
    const pinned = await rig.request(
      "PUT",
      `/api/v1/admin/organizations/${org.body.id}/placement`,
      rig.admin,
      { node: "node-2" },
    );
    assert.is(pinned.status, 200, JSON.stringify(pinned.body));
    await rig.sync.poll();
    await rig.advance(800);
    assert.is(rig.sync.outcome?.ok, false);
    status = await edgeStatus(rig.server.pbx.deps.db, rig.config.edge!);
    assert.is(status.state, "FAILED", JSON.stringify(status));
    assert.match(status.error ?? "", "edge RPC");
    assert.ok(status.pendingChanges > 0, "the change is still owed");
    const failedStatus = await rig.status();
    assert.is(failedStatus.code, 5, failedStatus.stdout + failedStatus.stderr);
    assert.match(failedStatus.stdout, `edge ${rig.edgeDir}: FAILED`);
    assert.match(failedStatus.stdout, "last push failed at");
    await rig.advance(1000);
    assert.is(rig.sync.outcome?.ok, false, "the first retry fails too");
    await rig.edge.up();
    await rig.advance(1999);
    assert.is(rig.sync.outcome?.ok, false, "backoff: the second retry waits 2 s");
    await rig.advance(1);
    assert.is(rig.sync.outcome?.ok, true, rig.sync.outcome?.error ?? "");
    assert.is(rig.edge.htables.orgs.get(prefix), "2", "the org routes to node-2's set now");
    status = await edgeStatus(rig.server.pbx.deps.db, rig.config.edge!);
    assert.equal([status.state, status.error, status.pendingChanges], ["OK", null, 0]);
    const okStatus = await rig.status();
    assert.match(okStatus.stdout, `edge ${rig.edgeDir}: OK`);
    // (The node's units may still be deploying: only the edge line is looked at.)
    assert.match(okStatus.stdout, `applied ${status.wantedRevision?.slice(0, 12)}`);
  });
});

test("an edge that does not take the tables is not applied; a suspended org leaves the edge", async () => {
  await withEdgeServer(async (rig) => {
    await rig.request("POST", "/api/v1/admin/engine-nodes", rig.admin, {
      ...NODE,
      name: "node-1",
      sip_address: "127.0.0.11:5060",
    });
    const org = await rig.request("POST", "/api/v1/organizations", rig.admin, { name: "Acme" });
    const prefix: string = org.body.context_prefix;
    await rig.sync.poll();
    await rig.advance(800);
    assert.is(rig.edge.htables.orgs.get(prefix), "1");

    rig.edge.ignoreSets = true;
    rig.edge.htables.orgs.clear();
    await rig.request(
      "POST",
      "/api/v1/dids",
      { "x-api-key": org.body.api_key },
      {
        number: "+918065978001",
      },
    );
    await rig.advance(800);
    assert.is(rig.sync.outcome?.ok, false);
    assert.match(rig.sync.outcome?.error ?? "", "edge table orgs");
    const requests = createEdgeSyncRepository(rig.server.pbx.deps.db);
    assert.ok((await requests.pending()).length > 0, "not done: the edge did not take it");

    rig.edge.ignoreSets = false;
    const suspended = await rig.request(
      "PUT",
      `/api/v1/admin/organizations/${org.body.id}`,
      rig.admin,
      {
        status: "suspended",
      },
    );
    assert.is(suspended.status, 200, JSON.stringify(suspended.body));
    await rig.advance(1000);
    assert.is(rig.sync.outcome?.ok, true, rig.sync.outcome?.error ?? "");
    assert.is(rig.edge.htables.orgs.get(prefix), undefined, "a suspended org is not routed");
    assert.is(rig.edge.htables.dids.size, 0);
    assert.equal(await requests.pending(), []);
  });
});

test("the edge's shared memory is read from its RPC at each scrape; no series while it is away", async () => {
  await withEdgeServer(async (rig) => {
    const metrics = rig.server.metrics!;
    // Filling: a tenth of the 256 MB pool left (what PbxEdgeSharedMemoryLow fires on).
    rig.edge.shm.free = 26_843_545;
    const filling = new Scrape(await metrics.scrape());
    assert.is(filling.value("pbx_edge_shm_bytes", { kind: "total" }), REAL_SHMMEM.total);
    assert.is(filling.value("pbx_edge_shm_bytes", { kind: "free" }), 26_843_545);
    assert.is(filling.value("pbx_edge_shm_bytes", { kind: "max_used" }), REAL_SHMMEM.max_used);
    assert.ok(rig.edge.calls.includes("core.shmmem"));
    await rig.edge.down();
    const away = new Scrape(await metrics.scrape());
    assert.not.ok(away.has("pbx_edge_shm_bytes"), "no made-up figure while the edge is away");
    await rig.edge.up();
    assert.is(
      new Scrape(await metrics.scrape()).value("pbx_edge_shm_bytes", { kind: "free" }),
      26_843_545,
    );
  });
});

test("a sync stopped while it waits out a rate-limited reload stops at once, recording no failure", async () => {
  await withEdgeServer(async (rig) => {
    await rig.request("POST", "/api/v1/admin/engine-nodes", rig.admin, {
      ...NODE,
      name: "node-1",
      sip_address: "127.0.0.11:5060",
    });
    await rig.sync.poll();
    await rig.advance(800);
    assert.is(rig.sync.outcome?.ok, true, rig.sync.outcome?.error ?? "");
    await rig.request("POST", "/api/v1/admin/engine-nodes", rig.admin, {
      ...NODE,
      name: "node-2",
      sip_address: "127.0.0.12:5060",
    });
    await rig.sync.poll();
    await rig.advanceToReloadWait(800);
    await rig.sync.stop(); // no time passes: the wait is abandoned, not run out
    assert.is(rig.sync.outcome?.ok, true, "the earlier push's outcome stands");
    const status = await edgeStatus(rig.server.pbx.deps.db, rig.config.edge!);
    assert.equal([status.state, status.error], ["PENDING", null], JSON.stringify(status));
    assert.ok(status.pendingChanges > 0, "still owed, for the next holder");
  });
});

test("a replica that lost the edge-sync lease pushes nothing", async () => {
  await withEdgeServer(async (rig) => {
    await rig.request("POST", "/api/v1/admin/engine-nodes", rig.admin, {
      ...NODE,
      name: "node-1",
      sip_address: "127.0.0.11:5060",
    });
    await rig.request("POST", "/api/v1/organizations", rig.admin, { name: "Acme" });
    const timers = new FakeClock();
    const stale = new EdgeSync({
      db: rig.server.pbx.deps.db,
      edge: rig.config.edge!,
      timers,
      fence: () => Promise.reject(new LeaseLostError("this replica no longer holds the lease")),
    });
    const calls = rig.edge.calls.length;
    stale.start();
    timers.advance(0);
    await stale.idle();
    await stale.stop();
    assert.is(stale.outcome?.ok, false);
    assert.match(stale.outcome?.error ?? "", "no longer holds");
    assert.equal(
      rig.edge.calls.slice(calls).filter((call) => !call.startsWith("htable.dump")),
      [],
      "nothing was sent to the edge",
    );
  });
});

test.run();
