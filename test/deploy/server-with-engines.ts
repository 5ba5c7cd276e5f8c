// A `serve` (startServer) for the engine-node tests, with what each of them wrote out before: a
// fresh store (SQLite, or PostgreSQL under `npm run test:pg`) in a temp data directory, fake
// timers for the deployers and the replica leases, the admin's token, an API helper, and the
// engines added as nodes `node-1`..`node-<n>` through the admin API, at start or mid-test (a test
// that begins with the implicit engine). The engines are the caller's: fake AMI servers
// (test/deploy/fake-nodes.ts, node-media, node-runtime) or real Asterisk processes (two-nodes).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { type RunningServer, type StartServerOptions, startServer } from "../../src/api/server.js";
import { type Config, loadConfig } from "../../src/config.js";
import type { NodeRuntime } from "../../src/deploy/node-runtime.js";
import { freshStoreLocation, type TestStoreLocation } from "../store/test-database.js";
import { FakeClock } from "./helpers.js";

/** The leases' wall clock is T0 plus their fake timers' reading. */
export const T0 = Date.parse("2026-03-01T10:00:00.000Z");

/** Where a node's row says its engine is. */
export interface NodeEngine {
  /** Default: the API's default (127.0.0.1). */
  amiHost?: string;
  amiPort: number;
  amiUsername: string;
  amiSecret: string;
  sipAddress: string;
}

/** A fake AMI engine listening on `port`, as node `node-<n>`'s row names it. */
export function fakeNodeEngine(port: number, n: number): NodeEngine {
  return { amiPort: port, amiUsername: "pbxctl", amiSecret: "secret", sipAddress: `10.0.0.1${n}` };
}

export interface ApiAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
  body: any;
  bytes: Uint8Array;
}

export interface ServerWithEngines {
  dataDir: string;
  config: Config;
  /** The store; its `location.url` is PBX_DATABASE_URL on a PostgreSQL run. */
  store: TestStoreLocation;
  server: RunningServer;
  /** The deployers' timers (debounces, retries): moved by the test. */
  engineClock: FakeClock;
  /** The replica leases' timers (the real ones with `realLeases`). */
  leaseTimers: FakeClock;
  /** The admin's JWT header. */
  admin: Record<string, string>;
  /** A JSON body, or bytes sent as audio/wav; the answer's body parsed when it is JSON. */
  request(method: string, path: string, headers?: object, body?: unknown): Promise<ApiAnswer>;
  /**
   * Adds `engines` as nodes `node-1`..`node-<n>` (capacity 10 each), then waits until this
   * replica took their roles and their start-up deploys are done.
   */
  addNodes(engines: readonly NodeEngine[]): Promise<void>;
  runtime(name: string): NodeRuntime;
  /** Every node's debounce run (`engineClock` moved `ms`) and its deploys awaited. */
  settle(ms?: number): Promise<void>;
  /** Runs `cleanup` at close, after the server stopped and before the store is dropped. */
  atClose(cleanup: () => Promise<unknown>): void;
  /**
   * Stops the server, runs the cleanups (the last registered first), drops the store and
   * removes the data directory.
   */
  close(): Promise<void>;
}

export async function startServerWithEngines(options: {
  password: string;
  /** Default `a`. */
  replicaId?: string;
  /** The engine side's environment (`PBX_PJSIP`, `PBX_DATABASE_URL` for realtime rows). */
  env?: (store: TestStoreLocation) => Record<string, string>;
  /** The leases on real timers (default: fake timers the test never needs to move). */
  realLeases?: boolean;
  /** The store in SQLite even under `npm run test:pg`. */
  sqliteOnly?: boolean;
  /** More server options (e.g. `moveOptions`), given last. */
  server?: Partial<StartServerOptions>;
}): Promise<ServerWithEngines> {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-nodes-"));
  const store = await freshStoreLocation(join(dataDir, "pbx.db"), {
    sqliteOnly: options.sqliteOnly ?? false,
  });
  const storeEnv: Record<string, string> =
    store.location.kind === "postgres" ? { PBX_DATABASE_URL: store.location.url } : {};
  const config = loadConfig(
    { ...storeEnv, PBX_ADMIN_PASSWORD: options.password, PBX_REPLICA_ID: options.replicaId ?? "a" },
    { dataDir, port: 0, host: "127.0.0.1" },
  );
  const engineClock = new FakeClock();
  const leaseTimers = new FakeClock();
  let server: RunningServer | null = null;
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async () => {
    await server?.close();
    for (const cleanup of cleanups.reverse()) await cleanup();
    await store.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    server = await startServer({
      config,
      logger: pino({ level: "silent" }),
      env: options.env?.(store) ?? {},
      engineOptions: { timers: engineClock },
      ...(options.realLeases
        ? {}
        : { roleOptions: { timers: leaseTimers, clock: () => new Date(T0 + leaseTimers.now()) } }),
      ...options.server,
    });
    await server.ready;
  } catch (error) {
    await close();
    throw error;
  }
  const running = server;
  const request = async (method: string, path: string, headers = {}, body?: unknown) => {
    const binary = body instanceof Uint8Array;
    const res = await fetch(`${running.url}/api/v1${path}`, {
      method,
      headers: {
        ...headers,
        ...(body ? { "content-type": binary ? "audio/wav" : "application/json" } : {}),
      },
      ...(body ? { body: binary ? body : JSON.stringify(body) } : {}),
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    let json: unknown = null;
    try {
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch {}
    return { status: res.status, body: json as ApiAnswer["body"], bytes };
  };
  try {
    const auth = await request(
      "POST",
      "/admin/auth",
      {},
      { admin_username: "admin", admin_password: options.password },
    );
    if (auth.status !== 200) throw new Error(`admin auth: ${JSON.stringify(auth.body)}`);
    const admin = { authorization: `Bearer ${auth.body.token}` };
    const nodes = running.nodes!;
    return {
      dataDir,
      config,
      store,
      server: running,
      engineClock,
      leaseTimers,
      admin,
      request,
      async addNodes(engines) {
        for (const [i, engine] of engines.entries()) {
          const added = await request("POST", "/admin/engine-nodes", admin, {
            name: `node-${i + 1}`,
            ...(engine.amiHost ? { ami_host: engine.amiHost } : {}),
            ami_port: engine.amiPort,
            ami_username: engine.amiUsername,
            ami_secret: engine.amiSecret,
            sip_address: engine.sipAddress,
            capacity: 10,
          });
          if (added.status !== 201) throw new Error(`node-${i + 1}: ${JSON.stringify(added.body)}`);
        }
        await nodes.refresh();
        await running.roles.tick();
        await running.roles.idle();
        await nodes.started();
      },
      atClose(cleanup) {
        cleanups.push(cleanup);
      },
      runtime(name) {
        const found = nodes.list().find((r) => r.node.name === name);
        if (!found) throw new Error(`${name} is not followed`);
        return found;
      },
      async settle(ms = 800) {
        engineClock.advance(ms);
        for (const r of nodes.list()) await r.engine.deploys.scheduler.idle();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
