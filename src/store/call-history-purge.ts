// The retention purge of one org's call history (issue 33): its calls, call records and journey
// steps (`call_events`) older than a cutoff, deleted in bounded batches, each its own short
// transaction, until nothing expired remains. One unbounded DELETE over millions of steps could
// outlast PostgreSQL's statement timeout and fail every day, purging nothing; on SQLite (one
// writer) it would hold every other write for as long. A batch touches at most
// `CALL_PURGE_BATCH.calls` calls or `CALL_PURGE_BATCH.rows` rows, and the purge yields between
// batches so the server's other work runs.
//
// Consistency: a call goes as one unit. A batch takes some expired calls and, in one transaction,
// deletes their expired records, their expired steps and then the calls themselves, so a listed
// call never lost its records or steps, and an interrupted purge (crash, timeout, restart) leaves
// only whole calls behind; the next run finishes the job. Records and steps left without a call
// (the later legs of a call that straddled an earlier cutoff; steps of a channel that never
// posted a record) are swept afterwards by their own age. Every statement names the org, and each reads an org-led
// index (EXPLAIN-checked on both dialects in test/store/call-history-purge.test.ts); one shape
// serves SQLite and PostgreSQL alike: neither's DELETE takes a LIMIT (SQLite's only when built
// so), both take `id IN (SELECT id ... LIMIT n)`.
import { sql } from "kysely";
import type { Db } from "./database.js";

/** Upper bounds of one batch: calls per transaction, rows per sweeping statement. */
export interface CallPurgeBatch {
  /** Calls (with their expired records and steps) deleted per transaction. */
  calls: number;
  /** Stray records, or stray steps, deleted per statement. */
  rows: number;
}

/**
 * A call has a few legs and some tens of steps, so 500 calls stay in the thousands of rows per
 * statement, as the sweeps' 5,000 do: milliseconds each on an index, far from any timeout.
 */
export const CALL_PURGE_BATCH: CallPurgeBatch = { calls: 500, rows: 5000 };

export interface CallPurgeOptions {
  batch?: CallPurgeBatch;
  /** Awaited between two batches; by default lets the event loop run what waits (one turn). */
  between?: () => Promise<void>;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A journey step's time as stored: the engine's `<epoch>.<micros>`, 12-digit padded (call-ingest.ts). */
export function stepTimeOf(cutoff: Date): string {
  return `${String(Math.floor(cutoff.getTime() / 1000)).padStart(12, "0")}.000000`;
}

/** Up to `limit` of the org's calls that started before `before` (calls_org_calldate). */
export function expiredCallsQuery(db: Db, orgId: string, before: string, limit: number) {
  return db
    .selectFrom("calls")
    .select("linkedid")
    .where("org_id", "=", orgId)
    .where("calldate", "<", before)
    .limit(limit);
}

/** The expired records of these calls (call_records_org_linkedid). */
export function deleteRecordsOfCalls(db: Db, orgId: string, linkedids: string[], before: string) {
  return db
    .deleteFrom("call_records")
    .where("org_id", "=", orgId)
    .where("linkedid", "in", linkedids)
    .where("calldate", "<", before);
}

/** The expired steps of these calls (call_events_org_linkedid). */
export function deleteStepsOfCalls(db: Db, orgId: string, linkedids: string[], before: string) {
  return db
    .deleteFrom("call_events")
    .where("org_id", "=", orgId)
    .where("linkedid", "in", linkedids)
    .where(sql.ref("timestamp"), "<", before);
}

/** These calls (the primary key, org_id and linkedid). */
export function deleteCalls(db: Db, orgId: string, linkedids: string[]) {
  return db.deleteFrom("calls").where("org_id", "=", orgId).where("linkedid", "in", linkedids);
}

/**
 * Up to `limit` expired records of the org (call_records_org_calldate): once the expired calls
 * are gone, only records left without their call (a call's calldate is its earliest record's).
 */
export function deleteStrayRecords(db: Db, orgId: string, before: string, limit: number) {
  return db
    .deleteFrom("call_records")
    .where(
      "id",
      "in",
      db
        .selectFrom("call_records")
        .select("id")
        .where("org_id", "=", orgId)
        .where("calldate", "<", before)
        .limit(limit),
    );
}

/**
 * Up to `limit` expired steps of the org without a call (call_events_org_timestamp, then the
 * calls' primary key): a call still kept keeps its steps, even one that came before the cutoff
 * (a call that started a moment before its first record), until the call itself expires.
 */
export function deleteStraySteps(db: Db, orgId: string, before: string, limit: number) {
  return db.deleteFrom("call_events").where(
    "id",
    "in",
    db
      .selectFrom("call_events as step")
      .select("step.id")
      .where("step.org_id", "=", orgId)
      .where(sql.ref("step.timestamp"), "<", before)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("calls")
              .select("calls.linkedid")
              .where("calls.org_id", "=", orgId)
              .whereRef("calls.linkedid", "=", "step.linkedid"),
          ),
        ),
      )
      .limit(limit),
  );
}

/** How many of the org's call records started before `cutoff` (what a purge would delete). */
export async function countCallRecordsBefore(db: Db, orgId: string, cutoff: Date): Promise<number> {
  const row = await db
    .selectFrom("call_records")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("org_id", "=", orgId)
    .where("calldate", "<", cutoff.toISOString())
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Deletes the org's calls, call records and journey steps older than `cutoff`, batch by batch
 * until none is left; answers the number of call records deleted.
 */
export async function purgeCallHistoryBefore(
  db: Db,
  orgId: string,
  cutoff: Date,
  options: CallPurgeOptions = {},
): Promise<number> {
  const batch = options.batch ?? CALL_PURGE_BATCH;
  const between = options.between ?? nextTurn;
  const before = cutoff.toISOString();
  const stepsBefore = stepTimeOf(cutoff);
  let records = 0;

  for (let more = true; more; ) {
    const deleted = await db.transaction().execute(async (trx) => {
      const calls = await expiredCallsQuery(trx, orgId, before, batch.calls).execute();
      const linkedids = calls.map((call) => call.linkedid);
      if (linkedids.length === 0) return { calls: 0, records: 0 };
      const gone = await deleteRecordsOfCalls(trx, orgId, linkedids, before).executeTakeFirst();
      await deleteStepsOfCalls(trx, orgId, linkedids, stepsBefore).execute();
      await deleteCalls(trx, orgId, linkedids).execute();
      return { calls: linkedids.length, records: Number(gone.numDeletedRows) };
    });
    records += deleted.records;
    more = deleted.calls === batch.calls;
    if (more) await between();
  }

  const sweep = async (statement: () => Promise<{ numDeletedRows: bigint }>) => {
    let total = 0;
    for (let more = true; more; ) {
      const deleted = Number((await statement()).numDeletedRows);
      total += deleted;
      more = deleted === batch.rows;
      if (more) await between();
    }
    return total;
  };
  records += await sweep(() =>
    deleteStrayRecords(db, orgId, before, batch.rows).executeTakeFirstOrThrow(),
  );
  await sweep(() => deleteStraySteps(db, orgId, stepsBefore, batch.rows).executeTakeFirstOrThrow());
  return records;
}
