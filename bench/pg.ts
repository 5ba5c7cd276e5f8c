// npm run bench:pg [-- --duration 10 --orgs 1000 --records 1000000 --requests 2000 --ingest 20000 --rate 200 --seconds 5]
// Issue 23's figures, in one run, on a throwaway PostgreSQL 15 cluster (as `npm run test:pg`):
//  1. authenticated GET /users (an org of 50 users) req/s with autocannon, 100 connections, one
//     `pbxctl serve` on SQLite, one on PostgreSQL, and three replicas on one PostgreSQL (the 100
//     connections split over them, their req/s summed: a load balancer's view);
//  2. GET /calls/history p50/p95 on `records` call records in PostgreSQL: the store bench:calls
//     builds, moved with `db copy`'s code (its time is printed too). TARGETS: p95 < 50 ms;
//  3. call-event ingest into PostgreSQL through the engine events' path: `ingest` Cdr events fed
//     at once, events/s, then `rate` events/s for `seconds`, lag event -> stored p50/p95.
//     TARGETS: >= 2,000/s, p95 < 100 ms.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { pino } from "pino";
import { createApp } from "../src/api/app.js";
import { startCallTracking } from "../src/api/call-tracking.js";
import { loadConfig } from "../src/config.js";
import { noDeploys } from "../src/domain/ports.js";
import { openStore } from "../src/store/database.js";
import { copyStore } from "../src/store/store-copy.js";
import { startPostgresCluster } from "../src/store/testing/postgres-cluster.js";
import {
  bulkLoad,
  INTERNAL_KEY,
  measureIngest,
  percentile,
  round,
  timeRequests,
} from "./call-load.js";

const root = new URL("..", import.meta.url).pathname;
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DURATION = arg("duration", 10);
const ORGS = arg("orgs", 1000);
const RECORDS = arg("records", 1_000_000);
const REQUESTS = arg("requests", 2000);
const INGEST = arg("ingest", 20_000);
const RATE = arg("rate", 200);
const SECONDS = arg("seconds", 5);
const ADMIN_PASSWORD = "bench-admin-password";

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(url: string, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function json(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    ...init,
    headers: { "content-type": "application/json", ...init.headers },
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * GET /users req/s of `replicas` `pbxctl serve` processes (one data dir) on the store `env` names
 * (an org of 50 users); the 100 connections are split over the replicas and their req/s summed.
 */
async function usersThroughput(
  env: Record<string, string>,
  replicas = 1,
): Promise<{ rps: number; p99: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-bench-pg-"));
  const children: ChildProcess[] = [];
  const bases: string[] = [];
  try {
    for (let i = 0; i < replicas; i++) {
      const port = await freePort();
      const child = spawn(
        process.execPath,
        [join(root, "bin/run.js"), "serve", "--port", String(port), "--data-dir", dataDir],
        {
          env: { ...process.env, ...env, PBX_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: "warn" },
          stdio: "ignore",
        },
      );
      children.push(child);
      bases.push(`http://127.0.0.1:${port}`);
      // One at a time: the first creates the data dir's secrets and migrates the store.
      await waitFor(`${bases[i]}/health`, child);
    }
    const base = bases[0]!;
    const { token } = await json(`${base}/api/v1/admin/auth`, {
      method: "POST",
      body: JSON.stringify({ admin_username: "admin", admin_password: ADMIN_PASSWORD }),
    });
    const org = await json(`${base}/api/v1/organizations`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: "Bench" }),
    });
    const headers = { "x-api-key": String(org.api_key) };
    for (let i = 0; i < 50; i++) {
      await json(`${base}/api/v1/users`, {
        method: "POST",
        headers,
        body: JSON.stringify({ extension: String(2000 + i), name: `User ${i}` }),
      });
    }
    const load = async () => {
      const results = await Promise.all(
        bases.map((url) =>
          autocannon({
            url: `${url}/api/v1/users`,
            connections: Math.ceil(100 / bases.length),
            duration: DURATION,
            headers,
          }),
        ),
      );
      for (const result of results) {
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(`GET /users: ${result.non2xx} non-2xx, ${result.errors} errors`);
        }
      }
      return {
        rps: results.reduce((sum, result) => sum + result.requests.average, 0),
        p99: Math.max(...results.map((result) => result.latency.p99)),
      };
    };
    await load(); // warm-up, discarded
    return await load();
  } finally {
    for (const child of children) {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

spawnSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
const cluster = await startPostgresCluster();
try {
  console.log(`bench:pg  PostgreSQL 15 (throwaway cluster, durability off as in test:pg)`);
  await cluster.admin("CREATE DATABASE bench_users");
  const sqlite = await usersThroughput({});
  const postgres = await usersThroughput({ PBX_DATABASE_URL: cluster.url("bench_users") });
  await cluster.admin("CREATE DATABASE bench_replicas");
  const replicated = await usersThroughput({ PBX_DATABASE_URL: cluster.url("bench_replicas") }, 3);
  console.log(`GET /users, 50 users, 100 connections, ${DURATION} s`);
  console.log(`  SQLite                     ${sqlite.rps.toFixed(0)} req/s, p99 ${sqlite.p99} ms`);
  console.log(
    `  PostgreSQL, 1 replica      ${postgres.rps.toFixed(0)} req/s, p99 ${postgres.p99} ms`,
  );
  console.log(
    `  PostgreSQL, 3 replicas     ${replicated.rps.toFixed(0)} req/s, p99 ${replicated.p99} ms`,
  );

  // The call history store of bench:calls, moved to PostgreSQL by db copy's code.
  const dir = mkdtempSync(join(tmpdir(), "pbx-bench-pg-calls-"));
  try {
    const config = loadConfig(
      { PBX_INTERNAL_KEY: INTERNAL_KEY, PBX_ADMIN_PASSWORD: ADMIN_PASSWORD },
      { dataDir: dir, port: 0, host: "127.0.0.1" },
    );
    await (await openStore(config.dbFile)).destroy();
    bulkLoad(config.dbFile, ORGS, RECORDS);
    await cluster.admin("CREATE DATABASE bench_calls");
    const source = await openStore(config.dbFile);
    const db = await openStore({ kind: "postgres", url: cluster.url("bench_calls"), poolSize: 10 });
    const started = performance.now();
    await copyStore(source, db);
    await source.destroy();
    console.log(
      `store: ${ORGS} orgs, ${RECORDS} call records (${Math.floor(RECORDS / 2)} calls), db copy to PostgreSQL with its checks in ${round((performance.now() - started) / 1000)} s`,
    );
    const tracking = startCallTracking({ db, clock: () => new Date() });
    await tracking.idle();
    const pbx = createApp({
      db,
      config,
      deployScheduler: noDeploys,
      logger: pino({ level: "silent" }),
      liveCalls: tracking.live,
    });
    const server: Server = pbx.app.listen(0, "127.0.0.1");
    await new Promise<void>((resolve) => server.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await timeRequests(url, () => "limit=50", REQUESTS, ORGS); // warm-up
    const variants: Array<[string, (i: number) => string]> = [
      ["newest 50", () => "limit=50"],
      ["page 5 of 50", () => "limit=50&offset=200"],
      ["direction + number", (i) => `direction=inbound&number=${9198 + (i % 10)}&limit=50`],
      ["extension", (i) => `extension=${100 + (i % 50)}&limit=50`],
      ["date range", () => "from=2026-10-10T00:00:00Z&to=2026-10-12T00:00:00Z&limit=50"],
    ];
    console.log(
      `GET /calls/history on PostgreSQL, ${REQUESTS} sequential requests per variant, random org (target p95 < 50 ms):`,
    );
    for (const [name, query] of variants) {
      const times = await timeRequests(url, query, REQUESTS, ORGS);
      console.log(
        `  ${name.padEnd(20)} p50 ${round(percentile(times, 50))} ms  p95 ${round(percentile(times, 95))} ms  p99 ${round(percentile(times, 99))} ms`,
      );
    }
    server.close();
    await tracking.stop();

    const figures = await measureIngest(db, {
      orgs: ORGS,
      burst: INGEST,
      rate: RATE,
      seconds: SECONDS,
    });
    console.log(
      `ingest into PostgreSQL: burst of ${INGEST} Cdr events = ${figures.eventsPerSecond} events/s (${figures.stored} stored; load average ${figures.load}; target >= 2,000/s); steady ${RATE} events/s for ${SECONDS} s: lag event -> stored p50 ${figures.lagP50} ms, p95 ${figures.lagP95} ms (target p95 < 100 ms)`,
    );
    await db.destroy();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  await cluster.stop();
}
