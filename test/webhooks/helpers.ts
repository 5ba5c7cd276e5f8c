// Shared pieces of the webhook tests: a store of the suite's backend (on SQLite, a database of the
// webhook tables alone; on test:pg, a fresh PostgreSQL database), a real HTTP receiver on
// loopback that records every request, and a clock the test moves.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import {
  createWebhook,
  type WebhookContext,
  type WebhookInput,
} from "../../src/domain/webhooks/webhooks.js";
import { type Db, openStoreHandle } from "../../src/store/database.js";
import { up } from "../../src/store/migrations/0701-webhooks.js";
import { up as upReplicaCoordination } from "../../src/store/migrations/2901-replica-coordination.js";
import type { Database } from "../../src/store/schema.js";
import { createDispatcher, type DispatcherOptions } from "../../src/webhooks/dispatcher.js";
import { createNodeHttpClient, type NodeHttpClient } from "../../src/webhooks/http-client.js";
import { plainSecrets } from "../../src/webhooks/secrets.js";
import { freshStoreLocation } from "../store/test-database.js";

export const ORG = "11111111-1111-4111-8111-111111111111";
export const OTHER_ORG = "22222222-2222-4222-8222-222222222222";

/**
 * Opens the webhook tests' store at `location`: a PostgreSQL URL (on `npm run test:pg`, a
 * database made from the migrated template), or the SQLite file it names, created with the
 * webhook tables' migrations (0701, and 2901's claim leases and per-webhook timestamps) applied
 * once when `migrate`.
 */
export async function openWebhookDb(location: string, migrate = true): Promise<Db> {
  if (/^postgres(ql)?:/.test(location)) {
    return openStoreHandle({ kind: "postgres", url: location, poolSize: 5 });
  }
  const sqlite = new SqliteDatabase(location);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("busy_timeout = 5000");
  // Only the webhook tables exist: the store's type, used on those tables alone.
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  if (migrate) {
    await up(db);
    await upReplicaCoordination(db as unknown as Kysely<unknown>);
  }
  return db;
}

export interface TestDb {
  db: Db;
  /** What `openWebhookDb` opens again (another handle, a child process): a file or a URL. */
  file: string;
  dir: string;
  close(): Promise<void>;
}

/**
 * A fresh store for one test, removed by `close()`: the suite's backend (test/store/
 * test-database.ts), so `npm run test:pg` runs the webhook tests on PostgreSQL too.
 */
export async function freshWebhookDb(): Promise<TestDb> {
  const dir = mkdtempSync(join(tmpdir(), "pbx-webhooks-"));
  const sqliteFile = join(dir, "webhooks.db");
  const store = await freshStoreLocation(sqliteFile);
  const file = store.location.kind === "postgres" ? store.location.url : sqliteFile;
  const db = await openWebhookDb(file);
  return {
    db,
    file,
    dir,
    async close() {
      await db.destroy();
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ManualClock {
  now: Date;
  advance(ms: number): void;
  (): Date;
}

/** A clock that only moves when told. */
export function manualClock(start = "2026-03-01T12:00:00.000Z"): ManualClock {
  const clock = (() => clock.now) as ManualClock;
  clock.now = new Date(start);
  clock.advance = (ms: number) => {
    clock.now = new Date(clock.now.getTime() + ms);
  };
  return clock;
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides each answer (default 200). */
  respond: (request: ReceivedRequest, index: number) => Answer | Promise<Answer>;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** An HTTP receiver on 127.0.0.1 (port 0 unless given). */
export async function startReceiver(port = 0): Promise<Receiver> {
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: Receiver = {
    url: "",
    port: 0,
    requests: [],
    respond: () => ({ status: 200, body: "ok" }),
    waitFor(count, timeoutMs = 10_000) {
      if (receiver.requests.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${receiver.requests.length} of ${count} requests`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const request: ReceivedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      receiver.requests.push(request);
      const index = receiver.requests.length - 1;
      for (const waiter of [...waiters]) {
        if (receiver.requests.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      const answer = await receiver.respond(request, index);
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? "");
    });
  });
  server.listen(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}

/** Use-case context over `db` with the SSRF guard off (targets are on loopback). */
export function testContext(db: Db, clock: () => Date, http?: NodeHttpClient): WebhookContext {
  return {
    db,
    clock,
    secrets: plainSecrets,
    http: http ?? createNodeHttpClient({ allowPrivate: true }),
    urlPolicy: { allowPrivate: true },
  };
}

/** A dispatcher over `db` with a loopback-allowed client and the given clock. */
export function testDispatcher(db: Db, clock: () => Date, extra: Partial<DispatcherOptions> = {}) {
  const http = createNodeHttpClient({ allowPrivate: true });
  const dispatcher = createDispatcher({ db, http, clock, ...extra });
  return { dispatcher, http };
}

/** Creates a webhook of ORG (or `org`) on `url` subscribed to `events`. */
export async function addWebhook(
  ctx: WebhookContext,
  url: string,
  input: Partial<WebhookInput> = {},
  org = ORG,
) {
  return createWebhook(ctx, org, { url, events: ["call.initiated"], ...input });
}
