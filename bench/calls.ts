// npm run bench:calls [-- --orgs 1000 --records 1000000 --requests 2000 --ingest 20000 --rate 200 --seconds 5]
// 1. A store of `records` call records of `orgs` orgs (two records per call, so records/2 calls,
//    spread over 30 days), bulk-loaded into the real schema (migration 1201).
// 2. GET /calls/history through the real app over HTTP (internal key + org_id, a random org per
//    request): p50/p95/p99 in ms, unfiltered and with filters (direction + number, extension).
//    TARGETS: p95 < 50 ms.
// 3. Ingest into that store through the same path as the engine's events (call tracking ->
//    rule 3 -> batches of one transaction each): `ingest` Cdr events fed at once (events/s), then a
//    steady `rate` events/s for `seconds` (lag from event to stored record, p50/p95).
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import { createApp } from "../src/api/app.js";
import { startCallTracking } from "../src/api/call-tracking.js";
import { loadConfig } from "../src/config.js";
import { noDeploys } from "../src/domain/ports.js";
import { openStore } from "../src/store/database.js";
import {
  bulkLoad,
  INTERNAL_KEY,
  measureIngest,
  percentile,
  round,
  timeRequests,
} from "./call-load.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ORGS = arg("orgs", 1000);
const RECORDS = arg("records", 1_000_000);
const REQUESTS = arg("requests", 2000);
const INGEST = arg("ingest", 20_000);
const RATE = arg("rate", 200);
const SECONDS = arg("seconds", 5);

const dir = await mkdtemp(join(tmpdir(), "pbx-bench-calls-"));
try {
  const config = loadConfig(
    { PBX_INTERNAL_KEY: INTERNAL_KEY, PBX_ADMIN_PASSWORD: "bench-admin-password" },
    { dataDir: dir, port: 0, host: "127.0.0.1" },
  );
  await (await openStore(config.dbFile)).destroy();
  const started = performance.now();
  bulkLoad(config.dbFile, ORGS, RECORDS);
  console.log(
    `store: ${ORGS} orgs, ${RECORDS} call records (${Math.floor(RECORDS / 2)} calls), loaded in ${round((performance.now() - started) / 1000)} s`,
  );
  const db = await openStore(config.dbFile);
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

  await timeRequests(url, () => "limit=50", REQUESTS, ORGS); // warm-up: statement cache, page cache
  const variants: Array<[string, (i: number) => string]> = [
    ["newest 50", () => "limit=50"],
    ["page 5 of 50", () => "limit=50&offset=200"],
    ["direction + number", (i) => `direction=inbound&number=${9198 + (i % 10)}&limit=50`],
    ["extension", (i) => `extension=${100 + (i % 50)}&limit=50`],
    ["date range", () => "from=2026-10-10T00:00:00Z&to=2026-10-12T00:00:00Z&limit=50"],
  ];
  console.log(`GET /calls/history, ${REQUESTS} sequential requests per variant, random org:`);
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
    `ingest burst: ${INGEST} Cdr events = ${figures.eventsPerSecond} events/s (${figures.stored} stored; load average ${figures.load}; target >= 2,000/s)`,
  );
  console.log(
    `ingest steady ${RATE} events/s for ${SECONDS} s: lag event -> stored p50 ${figures.lagP50} ms, p95 ${figures.lagP95} ms, max ${figures.lagMax} ms (target p95 < 100 ms)`,
  );
  await db.destroy();
} finally {
  await rm(dir, { recursive: true, force: true });
}
