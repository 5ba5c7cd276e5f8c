// npm run bench:calls [-- --orgs 1000 --records 1000000 --requests 2000 --ingest 20000 --rate 200 --seconds 5 --runs 5]
// 1. A store of `records` call records of `orgs` orgs (two records per call, so records/2 calls,
//    spread over 30 days), bulk-loaded into the real schema (migration 1201).
// 2. GET /calls/history through the real app over HTTP (internal key + org_id, a random org per
//    request): p50/p95/p99 in ms, unfiltered and with filters (direction + number, extension).
//    TARGETS: p95 < 50 ms.
// 3. Ingest into that store through the same path as the engine's events (call tracking ->
//    rule 3 -> batches of one transaction each): `ingest` Cdr events fed at once (events/s), then a
//    steady `rate` events/s for `seconds` (lag from event to stored record, p50/p95); repeated
//    `runs` times on the same store with new events each time, each run printed with the load
//    average, then the medians. No floor: the target is absolute (TARGETS.md).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/store/database.js";
import {
  buildCallStore,
  callBenchConfig,
  type IngestFigures,
  measureIngest,
  printHistoryLatencies,
  round,
  serveHistory,
} from "./call-load.js";
import { median, numberOption, runsOption } from "./figures.js";

const ORGS = numberOption("orgs", 1000);
const RECORDS = numberOption("records", 1_000_000);
const REQUESTS = numberOption("requests", 2000);
const INGEST = numberOption("ingest", 20_000);
const RATE = numberOption("rate", 200);
const SECONDS = numberOption("seconds", 5);
const RUNS = runsOption();

const dir = await mkdtemp(join(tmpdir(), "pbx-bench-calls-"));
try {
  const config = callBenchConfig(dir);
  const seconds = await buildCallStore(config.dbFile, ORGS, RECORDS);
  console.log(
    `store: ${ORGS} orgs, ${RECORDS} call records (${Math.floor(RECORDS / 2)} calls), loaded in ${round(seconds)} s`,
  );
  const db = await openStore(config.dbFile);
  const history = await serveHistory(db, config);
  console.log(`GET /calls/history, ${REQUESTS} sequential requests per variant, random org:`);
  await printHistoryLatencies(history.url, REQUESTS, ORGS);
  await history.close();

  const runs: IngestFigures[] = [];
  for (let run = 0; run < RUNS; run++) {
    const figures = await measureIngest(db, {
      orgs: ORGS,
      burst: INGEST,
      rate: RATE,
      seconds: SECONDS,
      firstEvent: run * (INGEST + RATE * SECONDS),
    });
    runs.push(figures);
    console.log(
      `ingest run ${run + 1}: burst of ${INGEST} Cdr events = ${figures.eventsPerSecond} events/s (${figures.stored} stored); ` +
        `steady ${RATE}/s for ${SECONDS} s: lag p50 ${figures.lagP50} ms, p95 ${figures.lagP95} ms, max ${figures.lagMax} ms (load ${figures.load})`,
    );
  }
  const of = (figure: (f: IngestFigures) => number) => median(runs.map(figure));
  console.log(
    `ingest, median of ${RUNS}: ${of((f) => f.eventsPerSecond)} events/s (target >= 2,000/s); ` +
      `lag event -> stored p50 ${of((f) => f.lagP50)} ms, p95 ${of((f) => f.lagP95)} ms (target p95 < 100 ms)`,
  );
  await db.destroy();
} finally {
  await rm(dir, { recursive: true, force: true });
}
