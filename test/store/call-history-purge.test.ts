// The retention purge of call history in bounded batches (src/store/call-history-purge.ts, issue
// 33): several batches, the count of records, an interrupted purge resumed, only whole calls left
// in between, strays swept, other orgs untouched, and each batch's statement on an org-led index.
import { type Compilable, CompiledQuery, sql } from "kysely";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  countCallRecordsBefore,
  deleteCalls,
  deleteRecordsOfCalls,
  deleteStepsOfCalls,
  deleteStrayRecords,
  deleteStraySteps,
  expiredCallsQuery,
  purgeCallHistoryBefore,
  stepTimeOf,
} from "../../src/store/call-history-purge.js";
import { foldIntoCall, insertCallRecord } from "../../src/store/call-record-repository.js";
import type { Db } from "../../src/store/database.js";
import { storeDialect } from "../../src/store/dialect.js";
import { freshStore } from "./helpers.js";

const A = "aaaaaaaa-0000-4000-8000-00000000000a";
const B = "bbbbbbbb-0000-4000-8000-00000000000b";
const CUTOFF = new Date("2026-06-01T00:00:00.000Z");
const OLD = "2026-01-10T10:00:00.000Z";
const NEW = "2026-07-10T10:00:00.000Z";
const SMALL = { calls: 2, rows: 3 };

type Store = Awaited<ReturnType<typeof freshStore>>;
const test = suite<{ store: Store }>("call history purge");

test.before.each(async (context) => {
  context.store = await freshStore();
});

test.after.each(async ({ store }) => {
  await store.close();
});

let sequence = 0;

/** A leg of call `linkedid`, folded into its call as the ingest does. */
async function addLeg(db: Db, orgId: string, linkedid: string, calldate: string): Promise<void> {
  sequence += 1;
  const row = {
    org_id: orgId,
    uniqueid: `u.${sequence}`,
    sequence,
    linkedid,
    calldate,
    answerdate: null,
    enddate: calldate,
    src: "100",
    dst: "200",
    dcontext: "internal",
    clid: "",
    channel: `PJSIP/100-${sequence}`,
    dstchannel: "",
    lastapp: "Dial",
    lastdata: "",
    duration: 10,
    billsec: 5,
    disposition: "ANSWERED",
    accountcode: "",
    peeraccount: "",
    direction: "internal" as const,
    recording_file: null,
    ingested_at: calldate,
  };
  assert.ok(await insertCallRecord(db, row));
  await foldIntoCall(db, orgId, row);
}

/** A journey step of call `linkedid` at `at`, stored as the ingest stores it. */
async function addStep(db: Db, orgId: string, linkedid: string, at: string): Promise<void> {
  sequence += 1;
  await db
    .insertInto("call_events")
    .values({
      org_id: orgId,
      linkedid,
      uniqueid: `u.${sequence}`,
      event: "Newchannel",
      timestamp: stepTimeOf(new Date(at)),
      channel: `PJSIP/100-${sequence}`,
      state: "Up",
      context: "internal",
      exten: "200",
      detail: "{}",
    })
    .execute();
}

/** A call of two legs and three steps. */
async function addCall(db: Db, orgId: string, linkedid: string, at: string): Promise<void> {
  await addLeg(db, orgId, linkedid, at);
  await addLeg(db, orgId, linkedid, at);
  for (let step = 0; step < 3; step += 1) await addStep(db, orgId, linkedid, at);
}

/** Per table, the org's linkedids present (sorted, with repeats: one per row). */
async function historyOf(db: Db, orgId: string) {
  const linkedids = async (table: "calls" | "call_records" | "call_events") =>
    (await db.selectFrom(table).select("linkedid").where("org_id", "=", orgId).execute())
      .map((row) => row.linkedid)
      .sort();
  return {
    calls: await linkedids("calls"),
    records: await linkedids("call_records"),
    steps: await linkedids("call_events"),
  };
}

/** Org A: five expired calls and two current ones; org B: two expired calls (same linkedids). */
async function seed(db: Db): Promise<void> {
  for (let n = 1; n <= 5; n += 1) await addCall(db, A, `old.${n}`, OLD);
  for (let n = 1; n <= 2; n += 1) await addCall(db, A, `new.${n}`, NEW);
  for (let n = 1; n <= 2; n += 1) await addCall(db, B, `old.${n}`, OLD);
}

const CURRENT = {
  calls: ["new.1", "new.2"],
  records: ["new.1", "new.1", "new.2", "new.2"],
  steps: ["new.1", "new.1", "new.1", "new.2", "new.2", "new.2"],
};

test("several small batches delete the org's expired history and answer its record count", async ({
  store,
}) => {
  await seed(store.db);
  const bOf = await historyOf(store.db, B);
  assert.is(await countCallRecordsBefore(store.db, A, CUTOFF), 10, "the dry run's count");
  let pauses = 0;
  const purged = await purgeCallHistoryBefore(store.db, A, CUTOFF, {
    batch: SMALL,
    between: async () => {
      pauses += 1;
    },
  });
  assert.is(purged, 10, "the records of the five expired calls");
  assert.ok(pauses >= 2, `five calls two at a time: it yielded between batches (${pauses})`);
  assert.equal(await historyOf(store.db, A), CURRENT);
  assert.equal(await historyOf(store.db, B), bOf, "another org's same-aged calls are untouched");
  assert.is(await countCallRecordsBefore(store.db, A, CUTOFF), 0);
  assert.is(await purgeCallHistoryBefore(store.db, A, CUTOFF, { batch: SMALL }), 0, "idempotent");
});

test("a purge interrupted between batches leaves whole calls only; the next run finishes", async ({
  store,
}) => {
  await seed(store.db);
  const stopped = await purgeCallHistoryBefore(store.db, A, CUTOFF, {
    batch: SMALL,
    between: async () => {
      throw new Error("statement timeout");
    },
  }).catch((error: Error) => error);
  assert.instance(stopped, Error);
  assert.is((stopped as Error).message, "statement timeout");
  const midway = await historyOf(store.db, A);
  assert.is(midway.calls.length, 5, "one batch (two calls) went, in one transaction");
  for (const linkedid of midway.calls) {
    assert.is(midway.records.filter((id) => id === linkedid).length, 2, `${linkedid}'s legs`);
    assert.is(midway.steps.filter((id) => id === linkedid).length, 3, `${linkedid}'s steps`);
  }
  assert.equal(new Set(midway.records), new Set(midway.calls), "no record without its call");
  assert.equal(new Set(midway.steps), new Set(midway.calls), "no step without its call");

  assert.is(await purgeCallHistoryBefore(store.db, A, CUTOFF, { batch: SMALL }), 6);
  assert.equal(await historyOf(store.db, A), CURRENT);
  assert.is((await historyOf(store.db, B)).calls.length, 2);
});

test("records and steps left without their call are swept by age, in batches", async ({
  store,
}) => {
  // A call straddling the cutoff: its call row and first leg go, its later leg stays (not
  // expired yet); steps of a channel that never posted a record have no call at all.
  await addLeg(store.db, A, "straddle", OLD);
  await addLeg(store.db, A, "straddle", NEW);
  for (let n = 0; n < 7; n += 1) await addStep(store.db, A, "no-record", OLD);
  await addStep(store.db, A, "no-record", NEW);
  await addStep(store.db, B, "no-record", OLD);
  // A call still kept whose first step came before the cutoff keeps that step.
  await addLeg(store.db, A, "kept", NEW);
  await addStep(store.db, A, "kept", OLD);

  assert.is(await purgeCallHistoryBefore(store.db, A, CUTOFF, { batch: SMALL }), 1);
  assert.equal(await historyOf(store.db, A), {
    calls: ["kept"],
    records: ["kept", "straddle"],
    steps: ["kept", "no-record"],
  });
  assert.equal((await historyOf(store.db, B)).steps, ["no-record"], "org B's step stays");

  const later = new Date("2026-08-01T00:00:00.000Z");
  // Six records without a call (as a straddling call's later legs are), swept three at a time.
  for (let n = 0; n < 4; n += 1) await addLeg(store.db, A, `later.${n}`, NEW);
  await store.db.deleteFrom("calls").where("org_id", "=", A).execute();
  assert.is(await countCallRecordsBefore(store.db, A, later), 6);
  assert.is(await purgeCallHistoryBefore(store.db, A, later, { batch: SMALL }), 6, "swept");
  assert.equal(await historyOf(store.db, A), { calls: [], records: [], steps: [] });
});

// PostgreSQL plans by statistics: over empty tables every org-led index costs the same. Two
// orgs' 10,000 calls of a leg and a step each, over a year, analysed, give it the choice a
// large store gives it; with scans priced out too, a Seq Scan would mean no usable index.
async function largeHistory(db: Db): Promise<void> {
  await sql`INSERT INTO calls (org_id, linkedid, first_uniqueid, first_sequence, calldate, src,
      dst, channel, dstchannel, duration, billsec, disposition, direction, legs)
    SELECT CASE WHEN n % 2 = 0 THEN ${A} ELSE ${B} END, 'l.' || n, 'u.' || n, 1,
      timestamptz '2026-01-01' + n * interval '50 minutes', '100', '200', 'PJSIP/x-' || n, '', 30,
      0, 'NO ANSWER', 'internal', 1
    FROM generate_series(1, 10000) AS n`.execute(db);
  await sql`INSERT INTO call_records (org_id, uniqueid, sequence, linkedid, calldate, src, dst,
      dcontext, clid, channel, dstchannel, lastapp, lastdata, duration, billsec, disposition,
      accountcode, peeraccount, direction, ingested_at)
    SELECT org_id, first_uniqueid, 1, linkedid, calldate, src, dst, 'internal', '', channel, '',
      'Dial', '', 30, 0, disposition, '', '', direction, calldate
    FROM calls`.execute(db);
  await sql`INSERT INTO call_events (org_id, linkedid, uniqueid, event, timestamp, channel, state,
      context, exten, detail)
    SELECT org_id, linkedid, first_uniqueid, 'Newchannel',
      lpad(extract(epoch FROM calldate)::bigint::text, 12, '0') || '.000000', channel, 'Up',
      'internal', '200', '{}'
    FROM calls`.execute(db);
  await sql`ANALYZE calls`.execute(db);
  await sql`ANALYZE call_records`.execute(db);
  await sql`ANALYZE call_events`.execute(db);
}

/** The plan the store chooses for `query`, as text (PostgreSQL: index scans preferred). */
async function planOf(db: Db, query: Compilable): Promise<string> {
  const compiled = query.compile();
  if (storeDialect(db) === "sqlite") {
    const rows = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`EXPLAIN QUERY PLAN ${compiled.sql}`, [...compiled.parameters]),
    );
    return rows.rows.map((row) => row.detail).join("\n");
  }
  return db.connection().execute(async (connection) => {
    await connection.executeQuery(CompiledQuery.raw("SET enable_seqscan = off"));
    try {
      const rows = await connection.executeQuery<{ "QUERY PLAN": string }>(
        CompiledQuery.raw(`EXPLAIN ${compiled.sql}`, [...compiled.parameters]),
      );
      return rows.rows.map((row) => row["QUERY PLAN"]).join("\n");
    } finally {
      await connection.executeQuery(CompiledQuery.raw("RESET enable_seqscan"));
    }
  });
}

test("every batch statement reads an org-led index, never a scan of the table", async ({
  store,
}) => {
  const db = store.db;
  if (storeDialect(db) === "postgres") await largeHistory(db);
  const before = CUTOFF.toISOString();
  const steps = stepTimeOf(CUTOFF);
  const ids = ["old.1", "old.2"];
  // name, statement, table, the index PostgreSQL names, the search SQLite reports.
  const statements: [string, Compilable, string, string, RegExp][] = [
    [
      "expired calls",
      expiredCallsQuery(db, A, before, 2),
      "calls",
      "calls_org_calldate",
      /calls_org_calldate \(org_id=\? AND calldate<\?\)/,
    ],
    [
      "records of calls",
      deleteRecordsOfCalls(db, A, ids, before),
      "call_records",
      "call_records_org_linkedid",
      /call_records_org_linkedid \(org_id=\? AND linkedid=\? AND calldate<\?\)/,
    ],
    [
      "steps of calls",
      deleteStepsOfCalls(db, A, ids, steps),
      "call_events",
      "call_events_org_linkedid",
      /call_events_org_linkedid \(org_id=\? AND linkedid=\? AND timestamp<\?\)/,
    ],
    // The primary key (org_id, linkedid): SQLite names it an autoindex.
    [
      "calls",
      deleteCalls(db, A, ids),
      "calls",
      "calls_pk",
      /sqlite_autoindex_calls_1 \(org_id=\? AND linkedid=\?\)/,
    ],
    [
      "stray records",
      deleteStrayRecords(db, A, before, 3),
      "call_records",
      "call_records_org_calldate",
      /call_records_org_calldate \(org_id=\? AND calldate<\?\)/,
    ],
    [
      "stray steps",
      deleteStraySteps(db, A, steps, 3),
      "call_events",
      "call_events_org_timestamp",
      /call_events_org_timestamp \(org_id=\? AND timestamp<\?\)/,
    ],
  ];
  for (const [name, query, table, index, sqliteSearch] of statements) {
    const plan = await planOf(db, query);
    if (name.startsWith("stray")) {
      // The rows picked are deleted by id, and a step's call is looked up by its key.
      const byId =
        storeDialect(db) === "sqlite" ? /INTEGER PRIMARY KEY/ : new RegExp(`${table}_pkey`);
      assert.match(plan, byId, `${name}:\n${plan}`);
      if (table === "call_events") {
        assert.match(plan, /sqlite_autoindex_calls_1|calls_pk/, `${name}:\n${plan}`);
      }
    }
    if (storeDialect(db) === "sqlite") {
      assert.match(plan, sqliteSearch, `${name}:\n${plan}`);
      assert.not.match(plan, new RegExp(`SCAN ${table}\\b`), `${name}:\n${plan}`);
    } else {
      assert.match(
        plan,
        new RegExp(`Index (Only )?Scan (using|on) ${index}\\b`),
        `${name}:\n${plan}`,
      );
      assert.match(plan, /Index Cond: .*org_id/, `${name}:\n${plan}`);
      assert.not.match(plan, /Seq Scan/, `${name}:\n${plan}`);
    }
  }
});

test.run();
