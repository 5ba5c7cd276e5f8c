// npm run bench:calls [-- --orgs 1000 --records 1000000 --requests 2000 --ingest 20000 --rate 200 --seconds 5]
// 1. A store of `records` call records of `orgs` orgs (two records per call, so records/2 calls,
//    spread over 30 days), bulk-loaded into the real schema (migration 1201).
// 2. GET /calls/history through the real app over HTTP (internal key + org_id, a random org per
//    request): p50/p95/p99 in ms, unfiltered and with filters (direction + number, extension).
//    TARGETS: p95 < 50 ms.
// 3. Ingest into that store through the same path as the engine's events (call tracking ->
//    rule 3 -> one transaction per record): `ingest` Cdr events fed at once (events/s), then a
//    steady `rate` events/s for `seconds` (lag from event to stored record, p50/p95).
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import SqliteDatabase from "better-sqlite3";
import { pino } from "pino";
import { createApp } from "../src/api/app.js";
import { startCallTracking } from "../src/api/call-tracking.js";
import { loadConfig } from "../src/config.js";
import type { AmiMessage } from "../src/engine/ami-connection.js";
import { openStore } from "../src/store/database.js";

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
const INTERNAL_KEY = "bench-internal-key";

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const round = (x: number) => Math.round(x * 100) / 100;
const orgId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

function bulkLoad(file: string): void {
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

async function timeRequests(url: string, query: (i: number) => string): Promise<number[]> {
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

function cdr(i: number): AmiMessage {
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

const dir = await mkdtemp(join(tmpdir(), "pbx-bench-calls-"));
try {
  const config = loadConfig(
    { PBX_INTERNAL_KEY: INTERNAL_KEY, PBX_ADMIN_PASSWORD: "bench-admin-password" },
    { dataDir: dir, port: 0, host: "127.0.0.1" },
  );
  await (await openStore(config.dbFile)).destroy();
  let started = performance.now();
  bulkLoad(config.dbFile);
  console.log(
    `store: ${ORGS} orgs, ${RECORDS} call records (${Math.floor(RECORDS / 2)} calls), loaded in ${round((performance.now() - started) / 1000)} s`,
  );
  const db = await openStore(config.dbFile);
  const tracking = startCallTracking({ db, clock: () => new Date() });
  await tracking.idle();
  const pbx = createApp({
    db,
    config,
    deployScheduler: { scheduleDeploy() {} },
    logger: pino({ level: "silent" }),
    liveCalls: tracking.live,
  });
  const server: Server = pbx.app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  await timeRequests(url, () => "limit=50"); // warm-up: statement cache, page cache
  const variants: Array<[string, (i: number) => string]> = [
    ["newest 50", () => "limit=50"],
    ["page 5 of 50", () => "limit=50&offset=200"],
    ["direction + number", (i) => `direction=inbound&number=${9198 + (i % 10)}&limit=50`],
    ["extension", (i) => `extension=${100 + (i % 50)}&limit=50`],
    ["date range", () => "from=2026-10-10T00:00:00Z&to=2026-10-12T00:00:00Z&limit=50"],
  ];
  console.log(`GET /calls/history, ${REQUESTS} sequential requests per variant, random org:`);
  for (const [name, query] of variants) {
    const times = await timeRequests(url, query);
    console.log(
      `  ${name.padEnd(20)} p50 ${round(percentile(times, 50))} ms  p95 ${round(percentile(times, 95))} ms  p99 ${round(percentile(times, 99))} ms`,
    );
  }
  server.close();
  await tracking.stop();

  // Ingest: the path engine events take (dispatch -> rule 3 -> one transaction per record).
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
  started = performance.now();
  for (let i = 0; i < INGEST; i++) ingest.feed(cdr(i));
  await ingest.idle();
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `ingest burst: ${INGEST} Cdr events in ${round(seconds)} s = ${Math.round(INGEST / seconds)} events/s (${stored} stored)`,
  );
  const total = RATE * SECONDS;
  const interval = 1000 / RATE;
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const event = cdr(INGEST + i);
    fedAt.set(String(event.uniqueid), performance.now());
    ingest.feed(event);
  }
  await ingest.idle();
  console.log(
    `ingest steady ${RATE} events/s for ${SECONDS} s: lag event -> stored p50 ${round(percentile(lags, 50))} ms, p95 ${round(percentile(lags, 95))} ms, max ${round(Math.max(...lags))} ms`,
  );
  await ingest.stop();
  await db.destroy();
} finally {
  await rm(dir, { recursive: true, force: true });
}
