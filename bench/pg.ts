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
import { type ChildProcess, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openStore } from "../src/store/database.js";
import { copyStore } from "../src/store/store-copy.js";
import { startPostgresCluster } from "../src/store/testing/postgres-cluster.js";
import {
  buildCallStore,
  callBenchConfig,
  measureIngest,
  printHistoryLatencies,
  round,
  serveHistory,
} from "./call-load.js";
import { freePort, loadUrls, root, seedUsers, startServe, stop, waitFor } from "./serve-load.js";

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
      const child = startServe(dataDir, port, env);
      children.push(child);
      bases.push(`http://127.0.0.1:${port}`);
      // One at a time: the first creates the data dir's secrets and migrates the store.
      await waitFor(`${bases[i]}/health`, child);
    }
    const headers = { "x-api-key": await seedUsers(bases[0]!) };
    const urls = bases.map((base) => `${base}/api/v1/users`);
    await loadUrls(urls, headers, DURATION); // warm-up, discarded
    const { rps, p99 } = await loadUrls(urls, headers, DURATION);
    return { rps, p99 };
  } finally {
    for (const child of children) await stop(child);
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
    const config = callBenchConfig(dir);
    await buildCallStore(config.dbFile, ORGS, RECORDS);
    await cluster.admin("CREATE DATABASE bench_calls");
    const source = await openStore(config.dbFile);
    const db = await openStore({ kind: "postgres", url: cluster.url("bench_calls"), poolSize: 10 });
    const started = performance.now();
    await copyStore(source, db);
    await source.destroy();
    console.log(
      `store: ${ORGS} orgs, ${RECORDS} call records (${Math.floor(RECORDS / 2)} calls), db copy to PostgreSQL with its checks in ${round((performance.now() - started) / 1000)} s`,
    );
    const history = await serveHistory(db, config);
    console.log(
      `GET /calls/history on PostgreSQL, ${REQUESTS} sequential requests per variant, random org (target p95 < 50 ms):`,
    );
    await printHistoryLatencies(history.url, REQUESTS, ORGS);
    await history.close();

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
