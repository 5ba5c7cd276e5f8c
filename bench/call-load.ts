// The call-history store and traffic bench:calls and bench:pg share: `records` call records of
// `orgs` orgs bulk-loaded into a SQLite store, timed GET /calls/history requests, and the engine's
// Cdr events for the ingest figures.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import SqliteDatabase from "better-sqlite3";
import { pino } from "pino";
import { createApp } from "../src/api/app.js";
import { startCallTracking } from "../src/api/call-tracking.js";
import { type Config, loadConfig } from "../src/config.js";
import { noDeploys } from "../src/domain/ports.js";
import type { AmiMessage } from "../src/engine/ami-connection.js";
import { type Db, openStore } from "../src/store/database.js";

export const INTERNAL_KEY = "bench-internal-key";

export const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
export const round = (x: number) => Math.round(x * 100) / 100;
export const orgId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

export function bulkLoad(file: string, ORGS: number, RECORDS: number): void {
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma("journal_mode = WAL");
  const now = new Date().toISOString();
  const org = sqlite.prepare(
    `insert into organizations (id, name, slug, type, status, context_prefix, recording_enabled,
     max_concurrent_calls, api_key_digest, api_key_encrypted, api_secret_hash, request_status,
     requested_by_email, decided_at, created_at, updated_at)
     values (?, ?, null, 'production', 'active', ?, 1, 0, ?, 'sealed', 'hash', null, null, null, ?, ?)`,
  );
  const record = sqlite.prepare(
    `insert into call_records (org_id, uniqueid, sequence, linkedid, calldate, answerdate, enddate,
     src, dst, dcontext, clid, channel, dstchannel, lastapp, lastdata, duration, billsec,
     disposition, accountcode, peeraccount, direction, recording_file, ingested_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, 'Dial', '', ?, ?, ?, ?, '', ?, null, ?)`,
  );
  const call = sqlite.prepare(
    `insert into calls (org_id, linkedid, first_uniqueid, first_sequence, calldate, enddate, src,
     dst, channel, dstchannel, duration, billsec, disposition, direction, recording_file, legs)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, null, 2)`,
  );
  const directions = ["inbound", "outbound", "internal"];
  const dispositions = ["ANSWERED", "ANSWERED", "NO ANSWER", "BUSY", "FAILED"];
  const start = Date.parse("2026-10-01T00:00:00Z");
  const span = 30 * 24 * 3600 * 1000;
  sqlite.transaction(() => {
    for (let i = 0; i < ORGS; i++) {
      org.run(orgId(i), `Org ${i}`, `org_${orgId(i)}_`, `digest-${i}`, now, now);
    }
    const calls = Math.floor(RECORDS / 2);
    for (let c = 0; c < calls; c++) {
      const org = orgId(c % ORGS);
      const linkedid = `1790000000.${c * 2}`;
      const date = new Date(start + Math.floor((c / calls) * span)).toISOString();
      const end = new Date(Date.parse(date) + 60_000).toISOString();
      const direction = directions[c % 3]!;
      const disposition = dispositions[c % 5]!;
      const ext = String(100 + (c % 50));
      const number = `9198${String(10000000 + (c % 9000000)).padStart(8, "0")}`;
      const [src, dst] = direction === "inbound" ? [number, ext] : [ext, number];
      const channel = `PJSIP/org_${org}_${ext}-${c.toString(16).padStart(8, "0")}`;
      for (let leg = 0; leg < 2; leg++) {
        record.run(
          org,
          `1790000000.${c * 2 + leg}`,
          leg,
          linkedid,
          date,
          date,
          end,
          src,
          dst,
          `org_${org}_internal`,
          channel,
          "",
          60,
          50,
          disposition,
          org,
          direction,
          now,
        );
      }
      call.run(
        org,
        linkedid,
        linkedid,
        0,
        date,
        end,
        src,
        dst,
        channel,
        60,
        50,
        disposition,
        direction,
      );
    }
  })();
  sqlite.pragma("wal_checkpoint(TRUNCATE)");
  sqlite.close();
}

/**
 * The config of a call bench's data dir `dir` (its SQLite file is `dbFile`), with the internal
 * key the history requests carry.
 */
export function callBenchConfig(dir: string): Config {
  return loadConfig(
    { PBX_INTERNAL_KEY: INTERNAL_KEY, PBX_ADMIN_PASSWORD: "bench-admin-password" },
    { dataDir: dir, port: 0, host: "127.0.0.1" },
  );
}

/** The migrated schema in `file`, then `records` records of `orgs` orgs; the seconds it took. */
export async function buildCallStore(file: string, orgs: number, records: number) {
  await (await openStore(file)).destroy();
  const started = performance.now();
  bulkLoad(file, orgs, records);
  return (performance.now() - started) / 1000;
}

/** The real app over `db` on a free port, for the history requests; `close` stops both. */
export async function serveHistory(
  db: Db,
  config: Config,
): Promise<{ url: string; close(): Promise<void> }> {
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
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.close();
      await tracking.stop();
    },
  };
}

/** GET /calls/history p50/p95/p99 of each query variant, a line each, after a warm-up. */
export async function printHistoryLatencies(
  url: string,
  requests: number,
  orgs: number,
): Promise<void> {
  await timeRequests(url, () => "limit=50", requests, orgs); // warm-up: statements, page cache
  const variants: Array<[string, (i: number) => string]> = [
    ["newest 50", () => "limit=50"],
    ["page 5 of 50", () => "limit=50&offset=200"],
    ["direction + number", (i) => `direction=inbound&number=${9198 + (i % 10)}&limit=50`],
    ["extension", (i) => `extension=${100 + (i % 50)}&limit=50`],
    ["date range", () => "from=2026-10-10T00:00:00Z&to=2026-10-12T00:00:00Z&limit=50"],
  ];
  for (const [name, query] of variants) {
    const times = await timeRequests(url, query, requests, orgs);
    console.log(
      `  ${name.padEnd(20)} p50 ${round(percentile(times, 50))} ms  p95 ${round(percentile(times, 95))} ms  p99 ${round(percentile(times, 99))} ms`,
    );
  }
}

export async function timeRequests(
  url: string,
  query: (i: number) => string,
  REQUESTS: number,
  ORGS: number,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const org = orgId(Math.floor(Math.random() * ORGS));
    const started = performance.now();
    const res = await fetch(`${url}/api/v1/calls/history?org_id=${org}&${query(i)}`, {
      headers: { "x-internal-key": INTERNAL_KEY },
    });
    await res.arrayBuffer();
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`GET /calls/history answered ${res.status}`);
  }
  return times;
}

export function cdr(i: number, ORGS: number): AmiMessage {
  const org = orgId(i % ORGS);
  return {
    event: "Cdr",
    accountcode: org,
    source: "919812345678",
    destination: "101",
    destinationcontext: `org_${org}_internal`,
    callerid: '"Caller" <919812345678>',
    channel: `PJSIP/org_${org}_trunk_carrier-${i.toString(16).padStart(8, "0")}`,
    destinationchannel: `PJSIP/org_${org}_101-${i.toString(16).padStart(8, "0")}`,
    lastapplication: "Dial",
    lastdata: "",
    starttime: "2026-11-25 08:00:00",
    answertime: "2026-11-25 08:00:02",
    endtime: "2026-11-25 08:01:00",
    duration: "60",
    billableseconds: "58",
    disposition: "ANSWERED",
    uniqueid: `1800000000.${i}`,
    linkedid: `1800000000.${i - (i % 2)}`,
    peeraccount: org,
    sequence: String(i),
    direction: "inbound",
    recordingfile: "",
  };
}

export interface IngestFigures {
  /** Burst: events fed at once, stored per second of wall time. */
  eventsPerSecond: number;
  /** Records of the burst stored (all of them: each event is a new record). */
  stored: number;
  /** Steady stream: event fed -> record stored (committed, reported), in ms. */
  lagP50: number;
  lagP95: number;
  lagMax: number;
  /** The machine's 1-minute load average when the burst ended (shared machine). */
  load: number;
}

/**
 * The ingest through the engine events' path (dispatch -> rule 3 -> batches, call-tracking.ts):
 * `burst` Cdr events fed at once (events/s), then `rate` events/s for `seconds` (lag).
 */
export async function measureIngest(
  db: Db,
  options: {
    orgs: number;
    burst: number;
    rate: number;
    seconds: number;
    /** Numbers events from here: a repeated measurement on one store feeds new records. */
    firstEvent?: number;
  },
): Promise<IngestFigures> {
  const first = options.firstEvent ?? 0;
  const fedAt = new Map<string, number>();
  const lags: number[] = [];
  let stored = 0;
  const ingest = startCallTracking({
    db,
    clock: () => new Date(),
    logger: pino({ level: "warn" }),
    onIngested: (input, result) => {
      if (input.kind !== "record") return;
      if (result.stored) stored++;
      const at = fedAt.get(input.record.uniqueid);
      if (at !== undefined) lags.push(performance.now() - at);
    },
  });
  await ingest.idle();
  const started = performance.now();
  for (let i = 0; i < options.burst; i++) ingest.feed(cdr(first + i, options.orgs));
  await ingest.idle();
  const seconds = (performance.now() - started) / 1000;
  const load = loadavg()[0]!;
  const burstStored = stored;
  const total = options.rate * options.seconds;
  const interval = 1000 / options.rate;
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = t0 + i * interval - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const event = cdr(first + options.burst + i, options.orgs);
    fedAt.set(String(event.uniqueid), performance.now());
    ingest.feed(event);
  }
  // Not idle(): that would store the last events at once, without their batch's delay.
  while (lags.length < total) await new Promise((resolve) => setTimeout(resolve, 10));
  await ingest.stop();
  return {
    eventsPerSecond: Math.round(options.burst / seconds),
    stored: burstStored,
    lagP50: round(percentile(lags, 50)),
    lagP95: round(percentile(lags, 95)),
    lagMax: round(Math.max(...lags)),
    load: round(load),
  };
}
