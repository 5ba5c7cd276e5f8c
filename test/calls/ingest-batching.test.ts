// The ingest's batches (issue 32): events are stored in one transaction per batch, started when
// enough wait or when the oldest has waited its delay on the injected timers; a batch that fails
// is split so that its good events are stored once and the bad one alone is dropped and logged;
// a replica taking the ingest over replays what it kept and stores each event once; an unavailable
// store (an outage, not a rejection) holds the events, in order, until it is back, within a cap,
// and a shutdown tries them once more without waiting for the outage to end.
import { sql } from "kysely";
import type { Logger } from "pino";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import type { EngineCallInput, IngestResult } from "../../src/domain/calls/call-ingest.js";
import { type CallIngestInstruments, noInstruments } from "../../src/metrics/instruments.js";
import type { Db } from "../../src/store/database.js";
import { storeDialect } from "../../src/store/dialect.js";
import { WEBHOOK_EVENTS } from "../../src/webhooks/events.js";
import { FakeClock } from "../deploy/helpers.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { addWebhook, testContext } from "../webhooks/helpers.js";
import { callFixtures, cdrEvent as cdr, cdrEvents, ORG_A, ORG_B } from "./fixture-events.js";
import { outboxRows } from "./outbox-rows.js";
import { keptLog, outageOf, refusedTries } from "./store-outage.js";

const fixtures = callFixtures();
const NOW = new Date("2026-11-25T08:00:00Z");
const CALL_AND_QUEUE = WEBHOOK_EVENTS.filter((e) => /^(call|queue)\./.test(e));
/** What org A's outbox holds after "inbound-ivr-queue" is stored once (call-webhooks.test.ts). */
const LIFECYCLE = [
  "call.initiated",
  "call.answered",
  "queue.entered",
  "queue.abandoned",
  "call.ended",
];

type Store = Awaited<ReturnType<typeof freshStore>>;

const test = suite<{ store: Store; trackers: CallTracking[] }>("call ingest in batches");

test.before.each(async (context) => {
  context.store = await freshStore();
  context.trackers = [];
  for (const org of fixtures.values().next().value!.orgs) {
    await insertOrg(context.store.db, org.id, org.id, org.context_prefix);
  }
  const ctx = testContext(context.store.db, () => NOW);
  for (const org of [ORG_A, ORG_B]) {
    await addWebhook(ctx, `http://127.0.0.1:9/${org}`, { events: [...CALL_AND_QUEUE] }, org);
  }
});

test.after.each(async ({ store, trackers }) => {
  for (const tracking of trackers) await tracking.stop();
  await store.close();
});

/** Call tracking whose reports are recorded, with the ingest's delay on fake timers. */
function tracker(
  context: { store: Store; trackers: CallTracking[] },
  options: {
    maxBatch?: number;
    standby?: boolean;
    logger?: Logger;
    /** The store as the ingest sees it (default the test's store). */
    db?: Db;
    maxHeld?: number;
    calls?: CallIngestInstruments;
  } = {},
) {
  const timers = new FakeClock();
  const reports: [string, IngestResult][] = [];
  let waiter: { count: number; resolve: () => void } | null = null;
  const tracking = startCallTracking({
    db: options.db ?? context.store.db,
    clock: () => NOW,
    timers,
    batch: { maxBatch: options.maxBatch ?? 500, maxDelayMs: 20 },
    ...(options.maxHeld !== undefined ? { maxHeld: options.maxHeld } : {}),
    ...(options.calls
      ? { instruments: { calls: options.calls, ami: noInstruments.ami("events") } }
      : {}),
    ...(options.standby ? { standby: true } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    onIngested: (input: EngineCallInput, result: IngestResult) => {
      const key =
        input.kind === "record"
          ? `record:${input.record.uniqueid}`
          : `event:${input.event.uniqueid}:${input.event.event}:${input.event.timestamp}`;
      reports.push([key, result]);
      if (waiter && reports.length >= waiter.count) waiter.resolve();
    },
  });
  context.trackers.push(tracking);
  /** Resolves once `count` inputs in all were reported. */
  const reported = (count: number) =>
    reports.length >= count
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          waiter = { count, resolve };
        });
  return { tracking, timers, reports, reported };
}

const recordCount = async (db: Db) =>
  Number(
    (
      await db
        .selectFrom("call_records")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Makes the store refuse the record of `uniqueid` (a trigger, in the store's dialect). */
async function refuseRecord(db: Db, uniqueid: string): Promise<void> {
  if (storeDialect(db) === "postgres") {
    await sql`CREATE FUNCTION test_refuse_record() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.uniqueid = ${sql.lit(uniqueid)} THEN RAISE EXCEPTION 'record refused'; END IF;
      RETURN NEW; END $$`.execute(db);
    await sql`CREATE TRIGGER test_refuse_record BEFORE INSERT ON call_records
      FOR EACH ROW EXECUTE FUNCTION test_refuse_record()`.execute(db);
    return;
  }
  await sql`CREATE TRIGGER test_refuse_record BEFORE INSERT ON call_records
    WHEN NEW.uniqueid = ${sql.lit(uniqueid)}
    BEGIN SELECT RAISE(ABORT, 'record refused'); END`.execute(db);
}

test("a batch is stored as soon as maxBatch events wait, without the clock", async (context) => {
  const { tracking, timers, reported } = tracker(context, { maxBatch: 4 });
  await tracking.idle();
  for (const id of ["1.1", "1.2", "1.3"]) tracking.feed(cdr(id));
  await settle();
  assert.is(await recordCount(context.store.db), 0, "three of four wait for more");
  tracking.feed(cdr("1.4"));
  await reported(4);
  assert.is(await recordCount(context.store.db), 4);
  assert.is(timers.now(), 0, "no time passed");
});

test("fewer events are stored once the oldest has waited the delay", async (context) => {
  const { tracking, timers, reported } = tracker(context, { maxBatch: 500 });
  await tracking.idle();
  tracking.feed(cdr("2.1"));
  timers.advance(10);
  tracking.feed(cdr("2.2"));
  timers.advance(9);
  await settle();
  assert.is(await recordCount(context.store.db), 0, "the first has waited 19 ms of 20");
  timers.advance(1);
  await reported(2);
  assert.is(
    await recordCount(context.store.db),
    2,
    "both go in the batch the first one's delay started",
  );
});

test("the same record twice in one batch is stored once and folded once", async (context) => {
  const { tracking, reports } = tracker(context);
  await tracking.idle();
  tracking.feed(cdr("5.1", "5.0"));
  tracking.feed(cdr("5.2", "5.0"));
  tracking.feed(cdr("5.1", "5.0"));
  await tracking.idle();
  assert.equal(
    reports.map(([key, result]) => [key, result.stored]),
    [
      ["record:5.1", true],
      ["record:5.2", true],
      ["record:5.1", false],
    ],
  );
  const call = await context.store.db
    .selectFrom("calls")
    .select("legs")
    .where("org_id", "=", ORG_A)
    .where("linkedid", "=", "5.0")
    .executeTakeFirstOrThrow();
  assert.is(Number(call.legs), 2);
});

test("a failing event in a batch: the others are stored once, it alone is logged", async (context) => {
  const errors: { uniqueid?: string }[] = [];
  const logger = {
    error: (fields: { uniqueid?: string }) => errors.push(fields),
    warn() {},
    info() {},
  } as unknown as Logger;
  await refuseRecord(context.store.db, "3.5");
  const { tracking, reports } = tracker(context, { logger });
  await tracking.idle();
  // One batch: the recorded call (journey events that emit webhooks, its records) with eight
  // calls of one record each around it, the fifth of which the store refuses.
  const call = fixtures.get("inbound-ivr-queue")!.events;
  for (let i = 1; i <= 4; i++) tracking.feed(cdr(`3.${i}`));
  for (const event of call) tracking.feed(event);
  for (let i = 5; i <= 8; i++) tracking.feed(cdr(`3.${i}`));
  await tracking.idle();

  const fed = reports.map(([key]) => key);
  assert.is(new Set(fed).size, fed.length, "each input reported once");
  assert.not.ok(fed.includes("record:3.5"), "the refused record is not reported stored");
  assert.equal(
    errors.map((e) => e.uniqueid),
    ["3.5"],
    "the refused record alone is logged",
  );
  const stored = reports.filter(([key, result]) => key.startsWith("record:") && result.stored);
  assert.is(stored.length, 7 + cdrEvents(call).length);
  assert.is(await recordCount(context.store.db), 7 + cdrEvents(call).length, "nothing twice");
  const calls = await context.store.db
    .selectFrom("calls")
    .select(["linkedid", "legs"])
    .where("org_id", "=", ORG_A)
    .execute();
  assert.is(calls.length, 8, "seven one-record calls and the recorded one");
  assert.ok(
    calls.every((row) => Number(row.legs) === 1),
    "each record folded into its call once",
  );
  const outbox = await outboxRows(context.store.db, ORG_A);
  assert.equal(
    outbox.map(([type]) => type),
    LIFECYCLE,
    "the call's webhooks once each, though the batch that first held them failed",
  );
});

test("the replica taking the ingest over stores what the dead owner had not, each once", async (context) => {
  const owner = tracker(context);
  const standby = tracker(context, { standby: true, maxBatch: 7 });
  await owner.tracking.idle();
  await standby.tracking.idle();
  const call = fixtures.get("inbound-ivr-queue")!.events;
  const records = Array.from({ length: 20 }, (_, i) => cdr(`4.${i}`, `4.${i - (i % 2)}`));
  const stream = [...records.slice(0, 10), ...call, ...records.slice(10)];
  const half = 10 + Math.floor(call.length / 2);
  // Both follow the engine; the owner stores half of it and dies.
  for (const [i, event] of stream.entries()) {
    if (i < half) owner.tracking.feed(event);
    standby.tracking.feed(event);
  }
  await owner.tracking.idle();
  await standby.tracking.idle();
  assert.is(standby.reports.length, 0, "a standby stores nothing");
  const byOwner = owner.reports.filter(([, result]) => result.stored).length;
  assert.ok(byOwner > 0);

  standby.tracking.takeOverIngest();
  await standby.tracking.idle();
  const replayed = standby.reports.filter(([, r]) => !r.stored && r.reason === "duplicate");
  const added = standby.reports.filter(([, r]) => r.stored);
  assert.is(replayed.length, byOwner, "what the owner stored is a replay");
  const storedByOwner = new Set(owner.reports.filter(([, r]) => r.stored).map(([key]) => key));
  assert.ok(added.length > 0, "the second half is stored by the new owner");
  assert.not.ok(
    added.some(([key]) => storedByOwner.has(key)),
    "nothing stored by both",
  );
  const keys = standby.reports.map(([key]) => key);
  assert.is(new Set(keys).size, keys.length, "every input it kept, reported once");
  assert.is(await recordCount(context.store.db), 20 + cdrEvents(call).length, "each record once");
  const calls = await context.store.db
    .selectFrom("calls")
    .select(["linkedid", "legs"])
    .where("org_id", "=", ORG_A)
    .where("linkedid", "like", "4.%")
    .execute();
  assert.is(calls.length, 10);
  assert.ok(
    calls.every((row) => Number(row.legs) === 2),
    "every call has its two legs, folded once each",
  );
  assert.equal(
    (await outboxRows(context.store.db, ORG_A)).map(([type]) => type),
    LIFECYCLE,
    "no webhook twice, none missing",
  );
});

/** Ingest instruments that keep the drops and the outage changes. */
function keptMeasures() {
  const dropped: [string, number][] = [];
  const unavailable: boolean[] = [];
  const calls: CallIngestInstruments = {
    ingested() {},
    dropped: (reason, count) => dropped.push([reason, count]),
    storeUnavailable: (holding) => unavailable.push(holding),
    registrationsDropped() {},
  };
  return { calls, dropped, unavailable };
}

const storedUniqueids = async (db: Db) =>
  (await db.selectFrom("call_records").select("uniqueid").orderBy("id").execute()).map(
    (row) => row.uniqueid,
  );

test("an unavailable store holds the events: once it is back each is stored once, in order", async (context) => {
  const outage = outageOf(context.store.db);
  const { logger, said } = keptLog();
  const measures = keptMeasures();
  const { tracking, timers, reports } = tracker(context, {
    db: outage.db,
    maxBatch: 4,
    logger,
    calls: measures.calls,
  });
  await tracking.idle();
  outage.state.down = true;
  const fed = Array.from({ length: 10 }, (_, i) => `6.${i + 1}`);
  for (const id of fed.slice(0, 6)) tracking.feed(cdr(id));
  await refusedTries(outage, timers, 1);
  timers.advance(199);
  await settle();
  assert.is(outage.state.failures, 1, "not again before the backoff");
  timers.advance(1);
  await refusedTries(outage, timers, 2);
  assert.is(outage.state.failures, 2, "again after 200 ms, not split into single events");
  for (const id of fed.slice(6)) tracking.feed(cdr(id));
  timers.advance(399);
  await settle();
  assert.is(outage.state.failures, 2, "the backoff doubled");
  timers.advance(1);
  await refusedTries(outage, timers, 3);
  assert.is(outage.state.failures, 3, "then after 400 ms");
  assert.is(await recordCount(context.store.db), 0);
  assert.equal(reports, [], "nothing reported, nothing dropped");

  outage.state.down = false;
  timers.advance(800);
  await tracking.idle();
  assert.equal(await storedUniqueids(context.store.db), fed, "every event, once, in order");
  assert.equal(
    reports.map(([key, result]) => [key, result.stored]),
    fed.map((id) => [`record:${id}`, true]),
  );
  assert.equal(measures.dropped, []);
  assert.equal(measures.unavailable, [true, false], "the outage began and ended once");
  assert.equal(
    said.map(({ level }) => level),
    ["warn", "info"],
    "logged when it began and when it ended, not per try",
  );
});

test("after an outage a rejected event is still dropped alone and the rest stored", async (context) => {
  await refuseRecord(context.store.db, "7.3");
  const outage = outageOf(context.store.db);
  const { logger, said } = keptLog();
  const measures = keptMeasures();
  const { tracking, timers } = tracker(context, { db: outage.db, logger, calls: measures.calls });
  await tracking.idle();
  outage.state.down = true;
  for (let i = 1; i <= 6; i++) tracking.feed(cdr(`7.${i}`));
  timers.advance(20);
  await refusedTries(outage, timers, 1);
  outage.state.down = false;
  timers.advance(200);
  await tracking.idle();
  assert.equal(await storedUniqueids(context.store.db), ["7.1", "7.2", "7.4", "7.5", "7.6"]);
  assert.equal(measures.dropped, [["rejected", 1]]);
  assert.equal(
    said.filter(({ level }) => level === "error").map(({ fields }) => fields.uniqueid),
    ["7.3"],
  );
});

test("beyond the cap the oldest held events go, counted, logged once; the newest are stored", async (context) => {
  const outage = outageOf(context.store.db);
  const { logger, said } = keptLog();
  const measures = keptMeasures();
  const { tracking, timers } = tracker(context, {
    db: outage.db,
    maxBatch: 4,
    maxHeld: 5,
    logger,
    calls: measures.calls,
  });
  await tracking.idle();
  outage.state.down = true;
  const fed = Array.from({ length: 12 }, (_, i) => `8.${i + 1}`);
  for (const id of fed) tracking.feed(cdr(id));
  await refusedTries(outage, timers, 1);
  timers.advance(200);
  await refusedTries(outage, timers, 2);
  outage.state.down = false;
  timers.advance(400);
  await tracking.idle();
  assert.equal(await storedUniqueids(context.store.db), fed.slice(7), "the newest five");
  assert.is(
    measures.dropped.reduce((sum, [reason, count]) => sum + (reason === "overflow" ? count : 0), 0),
    7,
  );
  assert.is(
    said.filter(({ message }) => message.startsWith("call events dropped")).length,
    1,
    "one log line for the outage's drops",
  );
});

test("stop while the store stays down: one more try, then the held events are let go and counted", async (context) => {
  const outage = outageOf(context.store.db);
  const { logger, said } = keptLog();
  const measures = keptMeasures();
  const { tracking } = tracker(context, { db: outage.db, logger, calls: measures.calls });
  await tracking.idle();
  outage.state.down = true;
  for (let i = 1; i <= 3; i++) tracking.feed(cdr(`9.${i}`));
  await tracking.stop();
  assert.is(outage.state.failures, 1, "the try at stop (the batch's delay had not passed)");
  assert.equal(measures.dropped, [["shutdown", 3]]);
  assert.equal(measures.unavailable, [true, false]);
  assert.ok(said.some(({ message }) => message.includes("still unavailable at shutdown")));
  outage.state.down = false;
  assert.is(await recordCount(context.store.db), 0);
});

test("stop does not wait for a store that never answers longer than its bound", async (context) => {
  const outage = outageOf(context.store.db);
  const { logger, said } = keptLog();
  const { tracking, timers } = tracker(context, { db: outage.db, logger });
  await tracking.idle();
  outage.state.hang = true;
  tracking.feed(cdr("10.1"));
  timers.advance(20);
  await settle();
  let stopped = false;
  const stopping = tracking.stop().then(() => {
    stopped = true;
  });
  await settle();
  assert.not.ok(stopped, "waits for the store a while");
  timers.advance(5_000);
  await stopping;
  assert.ok(stopped, "stopped after INGEST_STOP_MS though the store never answered");
  assert.ok(said.some(({ message }) => message.includes("without waiting longer for the store")));
  outage.state.hang = false;
  outage.state.release();
});

test.run();
