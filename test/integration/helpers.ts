// The real server over a fresh store, with the real scheduler on a fake clock, the real deployer
// into a temp engine directory and, optionally, the fake AMI server as the engine.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import * as assert from "uvu/assert";
import { type RunningServer, startServer } from "../../src/api/server.js";
import { loadConfig } from "../../src/config.js";
import { REALTIME_RETRY_DELAYS_MS } from "../../src/deploy/realtime-pjsip.js";
import { createAmiTarget } from "../../src/engine/ami-target.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import type { Did, User } from "../../src/model/org-state.js";
import { sipDigest } from "../../src/model/secrets.js";
import { type Db, openStoreHandle } from "../../src/store/database.js";
import { createDidRepository } from "../../src/store/did-repository.js";
import { createPjsipRealtimeRepository } from "../../src/store/pjsip-realtime-repository.js";
import { createUserRepository } from "../../src/store/user-repository.js";
import { FakeClock } from "../deploy/helpers.js";
import { freshStoreLocation } from "../store/test-database.js";

export const ADMIN_PASSWORD = "admin-test-password";
export const INTERNAL_KEY = "internal-test-key";

export interface Rig {
  dataDir: string;
  engineDir: string;
  url: string;
  db: Db;
  running: RunningServer;
  clock: FakeClock;
  ami: FakeAmiServer | null;
  /** The server's environment (PBX_DATABASE_URL and PBX_PJSIP on a realtime rig). */
  env: Record<string, string>;
  /** Log lines (JSON) the server wrote at level info and above. */
  logs: string[];
  request(
    method: string,
    path: string,
    options?: { headers?: Record<string, string>; body?: unknown },
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
  ): Promise<{ status: number; body: any; text: string }>;
  adminHeaders(): Promise<Record<string, string>>;
  createOrg(name?: string): Promise<{ id: string; api_key: string; prefix: string }>;
  /** Moves the scheduler's clock and waits for the deploys it started. */
  advance(ms: number): Promise<void>;
  /**
   * Realtime PJSIP settled: every save's rows written and the engine told, a retry after a
   * failure included (`RealtimePjsip.settled()`, on this rig's fake clock). Throws, naming what
   * is owed, when retries over `withinMs` of that clock did not settle it.
   */
  settleRealtime(withinMs?: number): Promise<void>;
  read(path: string): string | null;
  /** Reload commands the fake engine received since the last call. */
  takeReloads(): string[];
  /** Restarts the server on the same data dir (a new process, as far as the server knows). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startRig(
  options: {
    ami?: boolean;
    reloadDelayMs?: number;
    env?: Record<string, string>;
    /** Serve this data directory (e.g. a restored one) instead of a fresh one; removed on close. */
    dataDir?: string;
    startupBatchSize?: number;
    /**
     * Realtime PJSIP (PBX_PJSIP=realtime) on a fresh PostgreSQL database of the test:pg cluster;
     * the fake engine serves endpoints from its `ps_endpoints` behind a memory cache.
     */
    realtime?: boolean;
    /** The replica roles' lease timing (e.g. a renewal that never comes during the test). */
    roleOptions?: { ttlMs?: number; renewEveryMs?: number };
  } = {},
): Promise<Rig> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "pbx-integration-"));
  const store = options.realtime ? await freshStoreLocation(join(dataDir, "pbx.db")) : null;
  if (store && store.location.kind !== "postgres") {
    throw new Error("a realtime rig needs the PostgreSQL test cluster (npm run test:pg)");
  }
  const env: Record<string, string> = {
    ...options.env,
    ...(store?.location.kind === "postgres"
      ? { PBX_DATABASE_URL: store.location.url, PBX_PJSIP: "realtime" }
      : {}),
  };
  // The fake engine reads the rows over a connection of its own, as Asterisk does.
  const realtimeDb = store ? openStoreHandle(store.location) : null;
  // The fake "loads" what the server deploys into <data-dir>/asterisk, as the engine would.
  const ami = options.ami
    ? new FakeAmiServer({
        reloadDelayMs: options.reloadDelayMs ?? 0,
        engineDir: join(dataDir, "asterisk"),
        ...(store
          ? {
              realtimeEndpoint: async (id: string) =>
                realtimeDb !== null &&
                (await createPjsipRealtimeRepository(realtimeDb).row("ps_endpoints", id)) !== null,
            }
          : {}),
      })
    : null;
  const port = ami ? await ami.listen() : 0;
  // The same environment as the engine side, so PBX_SOUNDS_DIR reaches the greeting writer too.
  const config = loadConfig(
    { ...env, PBX_ADMIN_PASSWORD: ADMIN_PASSWORD, PBX_INTERNAL_KEY: INTERNAL_KEY },
    { dataDir, port: 0, host: "127.0.0.1" },
  );
  let clock = new FakeClock();
  const logs: string[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(line) });
  const boot = async () => {
    clock = new FakeClock();
    const running = await startServer({
      config,
      logger,
      ...(options.roleOptions ? { roleOptions: options.roleOptions } : {}),
      env: { ...env },
      engineOptions: {
        timers: clock,
        reloadQueueOptions: { retryInitialMs: 1, retryMaxMs: 2, maxAttempts: 3 },
        ...(options.startupBatchSize ? { startupBatchSize: options.startupBatchSize } : {}),
        ...(ami
          ? {
              target: createAmiTarget({
                host: "127.0.0.1",
                port,
                username: "pbxctl",
                secret: "secret",
                reconnectInitialMs: 10,
                actionTimeoutMs: 3000,
              }),
            }
          : {}),
      },
    });
    await running.ready;
    return running;
  };
  let running = await boot();
  let seen = 0;

  const rig: Rig = {
    dataDir,
    engineDir: join(dataDir, "asterisk"),
    get url() {
      return running.url;
    },
    get db() {
      return running.pbx.deps.db;
    },
    get running() {
      return running;
    },
    get clock() {
      return clock;
    },
    ami,
    env,
    logs,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(running.url + path, {
        method,
        headers,
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {}
      return { status: res.status, body, text };
    },
    async adminHeaders() {
      const res = await rig.request("POST", "/api/v1/admin/auth", {
        body: { admin_username: "admin", admin_password: ADMIN_PASSWORD },
      });
      assert.is(res.status, 200, res.text);
      return { authorization: `Bearer ${res.body.token}` };
    },
    async createOrg(name = "Acme") {
      const res = await rig.request("POST", "/api/v1/organizations", {
        headers: await rig.adminHeaders(),
        body: { name },
      });
      assert.is(res.status, 201, res.text);
      return { id: res.body.id, api_key: res.body.api_key, prefix: res.body.context_prefix };
    },
    async advance(ms) {
      clock.advance(ms);
      await running.engine!.deploys.scheduler.idle();
    },
    async settleRealtime(withinMs = 120_000) {
      const realtime = running.engine!.realtime!;
      const settled = realtime.settled({ withinMs });
      let done = false;
      void settled.then(
        () => {
          done = true;
        },
        () => {
          done = true;
        },
      );
      // Its retries and its bound wait on this fake clock: moved a backoff step at a time, each
      // step's retry (real store and engine round trips) awaited before the next.
      for (;;) {
        await realtime.idle();
        await new Promise((resolve) => setImmediate(resolve));
        if (done) return settled;
        if (realtime.owed() !== null) await rig.advance(REALTIME_RETRY_DELAYS_MS[0]);
      }
    },
    read(path) {
      const file = join(dataDir, "asterisk", path);
      return existsSync(file) ? readFileSync(file, "utf8") : null;
    },
    takeReloads() {
      if (!ami) return [];
      const all = ami.reloadCommands();
      const fresh = all.slice(seen);
      seen = all.length;
      return fresh;
    },
    async restart() {
      await running.close();
      running = await boot();
    },
    async close() {
      await running.close().catch(() => {});
      await ami?.close();
      await realtimeDb?.destroy();
      await store?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return rig;
}

/** A softphone user with a SIP credential, as the compiler needs it. */
export function sipUser(prefix: string, extension: string, name = `User ${extension}`): User {
  return {
    extension,
    name,
    routing_type: "human",
    status: "active",
    ring_target: "ext",
    phone_number: null,
    ring_time: 30,
    outbound_did: null,
    call_recording: true,
    sip: { md5_cred: sipDigest(`${prefix}${extension}`, `pw-${extension}`) },
  };
}

export async function insertUser(db: Db, orgId: string, user: User): Promise<void> {
  await createUserRepository(db).insert(orgId, user);
}

export async function insertDid(db: Db, orgId: string, number: string): Promise<void> {
  const did: Did = {
    number,
    status: "active",
    pool_status: "assigned",
    is_default: false,
    routing_type: null,
    routing_destination: null,
    routing_environment: "prod",
  };
  await createDidRepository(db).insert(orgId, did);
}

/** Runs `run` on a fresh rig and closes it, whatever happens. */
export async function withRig(
  options: Parameters<typeof startRig>[0],
  run: (rig: Rig) => Promise<void>,
): Promise<void> {
  const rig = await startRig(options);
  try {
    await run(rig);
  } finally {
    await rig.close();
  }
}
