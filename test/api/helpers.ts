// Starts the real app on a loopback port over a fresh store (SQLite, or PostgreSQL under
// `npm run test:pg`), with a recording deploy
// scheduler and a clock the test moves.
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import * as assert from "uvu/assert";
import { createApp, type PbxApp } from "../../src/api/app.js";
import type { RouteDefinition } from "../../src/api/registry.js";
import { allRoutes } from "../../src/api/routes/index.js";
import { type Config, loadConfig, type StoreLocation } from "../../src/config.js";
import type { IdentityVerifier } from "../../src/domain/access/user-login.js";
import type { CallControlPort } from "../../src/domain/calls/call-control.js";
import type { LiveCallsView } from "../../src/domain/calls/live-calls.js";
import type { ConfigDeploys } from "../../src/domain/config/config-deploy.js";
import { type Db, followStoreChanges, openStore } from "../../src/store/database.js";
import { freshStoreLocation } from "../store/test-database.js";
import { createContract } from "./contract.js";

export const ADMIN_PASSWORD = "admin-test-password";
export const INTERNAL_KEY = "internal-test-key";

export interface TestResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
  body: any;
  text: string;
}

export interface TestApp {
  url: string;
  db: Db;
  config: Config;
  pbx: PbxApp;
  /** Org ids passed to scheduleDeploy, in order. */
  deploys: string[];
  clock: { now: Date; advance(seconds: number): void };
  request(
    method: string,
    path: string,
    options?: { headers?: Record<string, string>; body?: unknown; rawBody?: string },
  ): Promise<TestResponse>;
  adminToken(): Promise<string>;
  /** Open client connections of the server (to see that it noticed a client leaving). */
  connections(): Promise<number>;
  /** Creates an active org as the admin; returns its id, key and secret. */
  createOrg(name?: string): Promise<{ id: string; api_key: string; api_secret: string }>;
  close(): Promise<void>;
}

export async function startTestApp(
  options: {
    env?: Record<string, string>;
    identityVerifier?: IdentityVerifier | null;
    routes?: readonly RouteDefinition[];
    liveCalls?: LiveCallsView;
    callControl?: CallControlPort;
    /**
     * The deploy side of `/config/*`, built over the app's store (absent: those routes answer
     * 503, as without an engine).
     */
    configDeploys?: (db: Db) => ConfigDeploys;
    /** A test about the SQLite store itself: SQLite even under `npm run test:pg`. */
    sqliteOnly?: boolean;
    /** Another install's data directory (its secrets) and store: kept when this app closes. */
    install?: { dataDir: string; store: StoreLocation };
  } = {},
): Promise<TestApp> {
  const dir = options.install?.dataDir ?? mkdtempSync(join(tmpdir(), "pbx-api-"));
  const config = loadConfig(
    {
      PBX_ADMIN_PASSWORD: ADMIN_PASSWORD,
      PBX_INTERNAL_KEY: INTERNAL_KEY,
      PBX_BASE_URL: "https://pbx.example.test",
      ...options.env,
    },
    { dataDir: dir, port: 0, host: "127.0.0.1" },
  );
  const store = options.install
    ? { location: options.install.store, drop: async () => {} }
    : await freshStoreLocation(config.dbFile, { sqliteOnly: options.sqliteOnly ?? false });
  const db = await openStore(store.location);
  // As `serve` does: on a PostgreSQL run the API's reads are cached behind the change feed, so
  // the whole API suite checks cached answers there too.
  await followStoreChanges(db);
  const deploys: string[] = [];
  const clock = {
    now: new Date("2026-01-01T00:00:00Z"),
    advance(seconds: number) {
      this.now = new Date(this.now.getTime() + seconds * 1000);
    },
  };
  const pbx = createApp({
    db,
    config,
    deployScheduler: {
      recordDeploy: async () => {},
      scheduleDeploy: (orgId) => deploys.push(orgId),
    },
    clock: () => clock.now,
    logger: pino({ level: "silent" }),
    ...(options.identityVerifier !== undefined
      ? { identityVerifier: options.identityVerifier }
      : {}),
    ...(options.routes ? { routes: options.routes } : {}),
    ...(options.liveCalls ? { liveCalls: options.liveCalls } : {}),
    ...(options.callControl ? { callControl: options.callControl } : {}),
    ...(options.configDeploys ? { configDeploys: options.configDeploys(db) } : {}),
  });
  const server: Server = pbx.app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const contract = createContract(pbx.document, options.routes ?? allRoutes);

  const request: TestApp["request"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] = "application/json";
    } else if (opts.rawBody !== undefined) {
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(url + path, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {}
    const broken = contract(method, path, {
      status: res.status,
      contentType: res.headers.get("content-type") ?? "",
      body: parsed,
    });
    // The answer breaks the published document: fail the test that received it.
    assert.not.ok(broken, broken ?? "");
    return { status: res.status, headers: res.headers, body: parsed, text };
  };

  const app: TestApp = {
    url,
    db,
    config,
    pbx,
    deploys,
    clock,
    request,
    async adminToken() {
      const res = await request("POST", "/api/v1/admin/auth", {
        body: { admin_username: "admin", admin_password: ADMIN_PASSWORD },
      });
      assert.is(res.status, 200, res.text);
      return res.body.token as string;
    },
    async createOrg(name = "Acme") {
      const res = await request("POST", "/api/v1/organizations", {
        headers: { authorization: `Bearer ${await app.adminToken()}` },
        body: { name },
      });
      assert.is(res.status, 201, res.text);
      return { id: res.body.id, api_key: res.body.api_key, api_secret: res.body.api_secret };
    },
    connections() {
      return new Promise<number>((resolve, reject) =>
        server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.destroy();
      await store.drop();
      if (!options.install) rmSync(dir, { recursive: true, force: true });
    },
  };
  return app;
}

/**
 * The rows of a list answer: the `data` of a page envelope, or the bare array of the lists SPEC.md
 * fixes as arrays (`GET /ivrs`, `GET /tts/voices`).
 */
// biome-ignore lint/suspicious/noExplicitAny: JSON rows are inspected field by field
export function rowsOf(res: TestResponse): any[] {
  if (Array.isArray(res.body)) return res.body;
  assert.ok(Array.isArray(res.body?.data), `not a list answer: ${res.status} ${res.text}`);
  return res.body.data;
}

/** Asserts status and the exact `{"error": message}` body. */
export function expectError(res: TestResponse, status: number, message: string): void {
  assert.is(res.status, status, `expected ${status} "${message}", got ${res.status} ${res.text}`);
  assert.equal(res.body, { error: message });
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
