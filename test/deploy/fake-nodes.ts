// A `serve` (startServer) with engine nodes behind fake AMI engines (recorded answers only), for
// the node tests: each fake "loads" its node's directory (`<data-dir>/nodes/<name>`); the
// engines', the leases' and org moves' clocks are fakes the test advances. The store is SQLite,
// or PostgreSQL under `npm run test:pg`. The server itself: test/deploy/server-with-engines.ts.
import { join } from "node:path";
import type { RunningServer, StartServerOptions } from "../../src/api/server.js";
import type { NodeRuntime } from "../../src/deploy/node-runtime.js";
import { FakeAmiServer } from "../../src/engine/testing/fake-ami.js";
import { openStoreHandle } from "../../src/store/database.js";
import { createPjsipRealtimeRepository } from "../../src/store/pjsip-realtime-repository.js";
import { testBackend } from "../store/test-database.js";
import { FakeClock, tree } from "./helpers.js";
import {
  type ApiAnswer,
  fakeNodeEngine,
  startServerWithEngines,
  T0,
} from "./server-with-engines.js";

const PASSWORD = "fake-nodes-password";

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
  if (realtime && testBackend() !== "postgres") {
    throw new Error("realtime fake nodes need the PostgreSQL test cluster (npm run test:pg)");
  }
  const moveClock = new FakeClock();
  const running = await startServerWithEngines({
    password: PASSWORD,
    env: (store): Record<string, string> =>
      realtime && store.location.kind === "postgres"
        ? { PBX_DATABASE_URL: store.location.url, PBX_PJSIP: "realtime" }
        : {},
    server: {
      moveOptions: { timers: moveClock, clock: () => new Date(T0 + moveClock.now()) },
      ...serverOptions,
    },
  });
  const { dataDir, store, server } = running;
  try {
    const engineDb = realtime ? openStoreHandle(store.location) : null;
    if (engineDb) running.atClose(() => engineDb.destroy());
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
    for (const engine of engines) running.atClose(() => engine.close());
    const ports = await Promise.all(engines.map((e) => e.listen()));
    await running.addNodes(ports.map((port, i) => fakeNodeEngine(port, i + 1)));
    return {
      dataDir,
      storeUrl: store.location.kind === "postgres" ? store.location.url : null,
      server,
      engines,
      engineClock: running.engineClock,
      moveClock,
      admin: running.admin,
      call: running.request,
      dir,
      runtime: running.runtime,
      settle: async () => {
        await server.nodes!.refresh();
        await running.settle();
      },
      close: running.close,
    };
  } catch (error) {
    await running.close();
    throw error;
  }
}
