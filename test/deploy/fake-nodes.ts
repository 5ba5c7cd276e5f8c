// A `serve` (startServer) with engine nodes behind fake AMI engines (recorded answers only), for
// the node tests: each fake "loads" its node's directory (`<data-dir>/nodes/<name>`); the
// engines' and the leases' clocks are fakes the test advances. The store is SQLite, or
// PostgreSQL under `npm run test:pg`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { type RunningServer, type StartServerOptions, startServer } from "../../src/api/server.js";
import { loadConfig } from "../../src/config.js";
import type { NodeRuntime } from "../../src/deploy/node-runtime.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { openStoreHandle } from "../../src/store/database.js";
import { createPjsipRealtimeRepository } from "../../src/store/pjsip-realtime-repository.js";
import { freshStoreLocation } from "../store/test-database.js";
import { FakeClock, tree } from "./helpers.js";

const PASSWORD = "fake-nodes-password";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");

export interface ApiAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
  body: any;
}

export interface FakeNodes {
  dataDir: string;
  /** PBX_DATABASE_URL of the store on a PostgreSQL run (what a CLI command needs), else null. */
  storeUrl: string | null;
  server: RunningServer;
  /** The fake engine of `node-<n>` at index n-1. */
  engines: FakeAmiServer[];
  engineClock: FakeClock;
  /** The timers of `org move`'s driver; its wall clock is `T0 + moveClock.now()`. */
  moveClock: FakeClock;
  /** The admin's JWT header. */
  admin: Record<string, string>;
  call(method: string, path: string, headers?: object, body?: unknown): Promise<ApiAnswer>;
  /** The directory of node `node-<n>`. */
  dir(n: number): string;
  runtime(name: string): NodeRuntime;
  /** The store's view read again, then every node's debounce run and its deploys awaited. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** Whether any file of `dir` mentions `needle` (in its path or its text). */
export function holds(dir: string, needle: string): boolean {
  return [...tree(dir)].some(([path, text]) => path.includes(needle) || text.includes(needle));
}

/**
 * Waits for `done()`: the store queries behind it (a save's placement lookup) take real time. No
 * engine timer is waited on: those clocks are fake and advanced by the test.
 */
export async function until(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2500; i++) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`never happened: ${what}`);
}

/** A server with `count` engine nodes `node-1`..`node-<count>` (capacity 10 each), all started. */
export async function startFakeNodes(
  count: number,
  options: Partial<StartServerOptions> & {
    /**
     * Realtime PJSIP (PostgreSQL only): each fake engine looks endpoints up in its node's own
     * views (src/store/node-realtime-views.ts) over a connection of its own, as Asterisk does.
     */
    realtime?: boolean;
  } = {},
): Promise<FakeNodes> {
  const { realtime, ...serverOptions } = options;
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-fake-nodes-"));
  const store = await freshStoreLocation(join(dataDir, "pbx.db"));
  if (realtime && store.location.kind !== "postgres") {
    throw new Error("realtime fake nodes need the PostgreSQL test cluster (npm run test:pg)");
  }
  const storeEnv: Record<string, string> =
    store.location.kind === "postgres" ? { PBX_DATABASE_URL: store.location.url } : {};
  const engineEnv: Record<string, string> = realtime ? { ...storeEnv, PBX_PJSIP: "realtime" } : {};
  const engineDb = realtime ? openStoreHandle(store.location) : null;
  const dir = (n: number) => join(dataDir, "nodes", `node-${n}`);
  const engines = Array.from(
    { length: count },
    (_, i) =>
      new FakeAmiServer({
        engineDir: dir(i + 1),
        implicitIncludes: true,
        // Each node its own, as docs/nodes.md asks (a node without one has its events held).
        systemName: `node-${i + 1}`,
        ...(engineDb
          ? {
              realtimeEndpoint: async (id: string) =>
                (
                  await createPjsipRealtimeRepository(engineDb).existing(
                    "ps_endpoints",
                    [id],
                    `node-${i + 1}`,
                  )
                ).has(id),
            }
          : {}),
      }),
  );
  const ports = await Promise.all(engines.map((e) => e.listen()));
  const leaseTimers = new FakeClock();
  const engineClock = new FakeClock();
  const moveClock = new FakeClock();
  const config = loadConfig(
    { ...storeEnv, PBX_ADMIN_PASSWORD: PASSWORD, PBX_REPLICA_ID: "a" },
    { dataDir, port: 0, host: "127.0.0.1" },
  );
  const server = await startServer({
    config,
    logger: pino({ level: "silent" }),
    env: engineEnv,
    engineOptions: { timers: engineClock },
    roleOptions: { timers: leaseTimers, clock: () => new Date(T0 + leaseTimers.now()) },
    moveOptions: { timers: moveClock, clock: () => new Date(T0 + moveClock.now()) },
    ...serverOptions,
  });
  const close = async () => {
    await server.close();
    for (const engine of engines) await engine.close();
    await engineDb?.destroy();
    await store.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await server.ready;
    const call = async (method: string, path: string, headers = {}, body?: unknown) => {
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method,
        headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return {
        status: res.status,
        body: (await res.json().catch(() => null)) as ApiAnswer["body"],
      };
    };
    const token = (
      await call("POST", "/admin/auth", {}, { admin_username: "admin", admin_password: PASSWORD })
    ).body.token;
    const admin = { authorization: `Bearer ${token}` };
    for (const [i, port] of ports.entries()) {
      const added = await call("POST", "/admin/engine-nodes", admin, {
        name: `node-${i + 1}`,
        ami_port: port,
        ami_username: "pbxctl",
        ami_secret: "secret",
        sip_address: `10.0.0.1${i + 1}`,
        capacity: 10,
      });
      if (added.status !== 201) throw new Error(`node-${i + 1}: ${JSON.stringify(added.body)}`);
    }
    const nodes = server.nodes!;
    await nodes.refresh();
    await server.roles.tick();
    await server.roles.idle();
    await nodes.started();
    return {
      dataDir,
      storeUrl: store.location.kind === "postgres" ? store.location.url : null,
      server,
      engines,
      engineClock,
      moveClock,
      admin,
      call,
      dir,
      runtime: (name) => nodes.list().find((r) => r.node.name === name)!,
      settle: async () => {
        await nodes.refresh();
        engineClock.advance(800);
        for (const r of nodes.list()) await r.engine.deploys.scheduler.idle();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
