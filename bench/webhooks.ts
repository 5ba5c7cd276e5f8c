// npm run bench:webhooks [-- --events 3000 --rate 200 --seconds 5 --concurrency 16 --runs 5]
// A local HTTP receiver on 127.0.0.1, and in the same run:
// 1. Throughput: N events emitted into the real outbox (SQLite file opened like the store opens
//    it, every migration run) while the real dispatcher runs, until the receiver has all N; deliveries/s.
//    Events are emitted `--emit-batch` to a transaction (default 500, the call ingest's batch: the
//    source of event bursts, src/api/call-tracking.ts INGEST_BATCH), so the figure is the
//    dispatcher's. Emitting one event per commit, as a single API request does, is bounded by the
//    store's fsync at synchronous=FULL (one WAL sync per commit): `--emit-batch 1` shows that
//    disk's rate, which is not the dispatcher's work (docs/performance.md).
// 2. Raw: the same N POSTs with node's fetch, `concurrency` loops, to the same receiver.
//    Printed: both rates and outbox/raw per run (the two sides run back to back, so each run's
//    ratio sees the same machine load), and the median ratio (TARGETS.md: >= 80%).
// 3. Latency: a steady stream of `rate` events/s for `seconds`; time from emitEvent returning
//    to the first attempt arriving at the receiver, p50/p95 (TARGETS.md: p50 < 50 ms).
// Figures are medians of the runs.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { emitEvent } from "../src/domain/webhooks/webhook-events.js";
import { createWebhook } from "../src/domain/webhooks/webhooks.js";
import { openStore } from "../src/store/database.js";
import { createDispatcher } from "../src/webhooks/dispatcher.js";
import { createNodeHttpClient } from "../src/webhooks/http-client.js";
import { plainSecrets } from "../src/webhooks/secrets.js";
import { load, median, numberOption, runsOption } from "./figures.js";

const EVENTS = numberOption("events", 3000);
const RATE = numberOption("rate", 200);
const SECONDS = numberOption("seconds", 5);
const CONCURRENCY = numberOption("concurrency", 16);
const EMIT_BATCH = numberOption("emit-batch", 500);
const RUNS = runsOption();
const ORG = "11111111-1111-4111-8111-111111111111";

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const round = (x: number) => Math.round(x * 10) / 10;

/** A receiver that answers 200 at once and calls `onEvent` with each body's data.seq. */
async function receiver() {
  let onEvent: (seq: number, at: number) => void = () => {};
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      count++;
      const text = Buffer.concat(chunks).toString();
      const seq = text.includes('"seq"') ? (JSON.parse(text).data?.seq as number) : -1;
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
      onEvent(seq, at);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    get count() {
      return count;
    },
    reset(handler: (seq: number, at: number) => void) {
      count = 0;
      onEvent = handler;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function outboxRig(url: string) {
  const dir = await mkdtemp(join(tmpdir(), "pbxctl-bench-webhooks-"));
  const db = await openStore(join(dir, "pbx.db"));
  const http = createNodeHttpClient({ allowPrivate: true });
  await createWebhook(
    {
      db,
      clock: () => new Date(),
      secrets: plainSecrets,
      http,
      urlPolicy: { allowPrivate: true },
    },
    ORG,
    { url, events: ["call.initiated"], secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
  );
  const dispatcher = createDispatcher({ db, http, concurrency: CONCURRENCY });
  await dispatcher.start();
  return {
    db,
    async close() {
      await dispatcher.stop();
      http.close();
      await db.destroy();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function waitForCount(target: () => number, n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 120_000;
    const check = () => {
      if (target() >= n) resolve();
      else if (Date.now() > deadline) reject(new Error(`only ${target()} of ${n} arrived`));
      else setTimeout(check, 1);
    };
    check();
  });
}

async function outboxThroughput(rx: Awaited<ReturnType<typeof receiver>>): Promise<number> {
  const rig = await outboxRig(rx.url);
  try {
    rx.reset(() => {});
    const started = performance.now();
    for (let first = 0; first < EVENTS; first += EMIT_BATCH) {
      const last = Math.min(EVENTS, first + EMIT_BATCH);
      await rig.db.transaction().execute(async (tx) => {
        for (let i = first; i < last; i++) {
          await emitEvent(tx, ORG, "call.initiated", { seq: i, call_id: `bench-${i}` }, tx);
        }
      });
    }
    await waitForCount(() => rx.count, EVENTS);
    return EVENTS / ((performance.now() - started) / 1000);
  } finally {
    await rig.close();
  }
}

async function rawThroughput(rx: Awaited<ReturnType<typeof receiver>>): Promise<number> {
  rx.reset(() => {});
  let next = 0;
  const started = performance.now();
  const loop = async () => {
    while (next < EVENTS) {
      const seq = next++;
      const res = await fetch(rx.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ event: "call.initiated", data: { seq, call_id: `bench-${seq}` } }),
      });
      await res.text();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  return EVENTS / ((performance.now() - started) / 1000);
}

async function latency(rx: Awaited<ReturnType<typeof receiver>>): Promise<number[]> {
  const rig = await outboxRig(rx.url);
  const emitted = new Map<number, number>();
  const latencies: number[] = [];
  try {
    rx.reset((seq, at) => {
      const t = emitted.get(seq);
      if (t !== undefined) {
        latencies.push(at - t);
        emitted.delete(seq);
      }
    });
    const total = RATE * SECONDS;
    const interval = 1000 / RATE;
    const started = performance.now();
    for (let i = 0; i < total; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await emitEvent(rig.db, ORG, "call.initiated", { seq: i });
      emitted.set(i, performance.now());
    }
    await waitForCount(() => latencies.length, total);
    return latencies;
  } finally {
    await rig.close();
  }
}

const rx = await receiver();
const outbox: number[] = [];
const raw: number[] = [];
const p50: number[] = [];
const p95: number[] = [];
for (let run = 0; run < RUNS; run++) {
  raw.push(await rawThroughput(rx));
  outbox.push(await outboxThroughput(rx));
  const l = await latency(rx);
  p50.push(percentile(l, 50));
  p95.push(percentile(l, 95));
  console.log(
    `run ${run + 1}: outbox ${Math.round(outbox[run]!)}/s, raw fetch ${Math.round(raw[run]!)}/s ` +
      `(${Math.round((outbox[run]! / raw[run]!) * 100)}%), ` +
      `latency p50 ${round(p50[run]!)} ms p95 ${round(p95[run]!)} ms (${load()})`,
  );
}
await rx.close();
const ratio = median(outbox.map((o, i) => o / raw[i]!));
console.log(
  `\nwebhooks: ${EVENTS} events emitted ${EMIT_BATCH} per commit, concurrency ${CONCURRENCY}, medians of ${RUNS} runs\n` +
    `  outbox + dispatcher: ${Math.round(median(outbox))} deliveries/s\n` +
    `  raw fetch loop:      ${Math.round(median(raw))} POSTs/s\n` +
    `  ratio (median of per-run ratios): ${Math.round(ratio * 100)}% (target >= 80%)\n` +
    `  event -> first attempt at ${RATE} events/s: p50 ${round(median(p50))} ms, p95 ${round(median(p95))} ms (target p50 < 50 ms)`,
);
