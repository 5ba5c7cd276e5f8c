// Call records and calls (migration 1201). Writes are idempotent by (uniqueid, sequence); every
// read takes the org id first and filters on it, so it stays inside that org's index range.
import { type SqlBool, sql } from "kysely";
import type {
  CallDirection,
  CallEventRow,
  CallRecordRow,
  CallRow,
  NewCallEventRow,
  NewCallRecordRow,
} from "./call-tables.js";
import type { Db } from "./database.js";
import { caseInsensitiveLike, storeDialect } from "./dialect.js";

export interface CallFilters {
  /** ISO 8601 UTC bounds on the call's start, `from` inclusive, `to` exclusive. */
  from?: string;
  to?: string;
  direction?: CallDirection;
  disposition?: string;
  /** A leg of the call has this extension as source or destination. */
  extension?: string;
  /** Digits found in the call's source or destination. */
  number?: string;
  /** A leg of the call has one of these exact numbers as source or destination (CRM contact). */
  numbers?: readonly string[];
  /** Calls left out (those still live, listed apart). */
  excludeLinkedIds?: readonly string[];
}

/** Stores one record unless the same (uniqueid, sequence) is stored; true when it was new. */
export async function insertCallRecord(db: Db, row: NewCallRecordRow): Promise<boolean> {
  const result = await db
    .insertInto("call_records")
    .values(row)
    .onConflict((oc) => oc.columns(["uniqueid", "sequence"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * How many rows one multi-row statement carries: the largest step of this ladder that fits what
 * is left. A few fixed sizes keep the distinct SQL texts (SQLite's prepared-statement cache,
 * src/store/database.ts) to a handful per statement, and the biggest stays well under both back
 * ends' bound-parameter limits (23 columns x 128 rows = 2,944; SQLite allows 32,766, pg 65,535).
 */
const CHUNK_LADDER = [128, 32, 8, 1] as const;

/** `rows` cut into chunks of the ladder's sizes, in order. */
export function ladderChunks<T>(rows: readonly T[]): T[][] {
  const chunks: T[][] = [];
  let at = 0;
  while (at < rows.length) {
    const left = rows.length - at;
    const size = CHUNK_LADDER.find((step) => step <= left)!;
    chunks.push(rows.slice(at, at + size));
    at += size;
  }
  return chunks;
}

const recordKey = (uniqueid: string, sequence: number) => `${sequence}\u0000${uniqueid}`;

/**
 * Stores records in multi-row statements, each unless the same (uniqueid, sequence) is stored or
 * comes earlier in `rows`; the answer says, per row, whether it was the one stored.
 */
export async function insertCallRecords(
  db: Db,
  rows: readonly NewCallRecordRow[],
): Promise<boolean[]> {
  const inserted = new Set<string>();
  for (const chunk of ladderChunks(rows)) {
    const stored = await db
      .insertInto("call_records")
      .values(chunk)
      .onConflict((oc) => oc.columns(["uniqueid", "sequence"]).doNothing())
      .returning(["uniqueid", "sequence"])
      .execute();
    for (const row of stored) inserted.add(recordKey(row.uniqueid, Number(row.sequence)));
  }
  // A key the statement stored counts for its first row only; a later copy is a replay.
  return rows.map((row) => inserted.delete(recordKey(row.uniqueid, row.sequence)));
}

// Ranks for folding legs into one call: the best outcome of any leg is the call's outcome, and
// a call that touched the outside is inbound (first) or outbound, else internal.
const DISPOSITION_RANK = (column: string) =>
  sql.raw(
    `CASE ${column} WHEN 'ANSWERED' THEN 5 WHEN 'BUSY' THEN 4 WHEN 'NO ANSWER' THEN 3 WHEN 'CONGESTION' THEN 2 ELSE 1 END`,
  );
const DIRECTION_RANK = (column: string) =>
  sql.raw(`CASE ${column} WHEN 'inbound' THEN 3 WHEN 'outbound' THEN 2 ELSE 1 END`);

/** A record to fold and the org it was stored for. */
export interface RecordOfOrg {
  orgId: string;
  row: NewCallRecordRow;
}

function callRowOf({ orgId, row }: RecordOfOrg) {
  return {
    org_id: orgId,
    linkedid: row.linkedid,
    first_uniqueid: row.uniqueid,
    first_sequence: row.sequence,
    calldate: row.calldate,
    enddate: row.enddate ?? null,
    src: row.src,
    dst: row.dst,
    channel: row.channel,
    dstchannel: row.dstchannel,
    duration: row.duration,
    billsec: row.billsec,
    disposition: row.disposition,
    direction: row.direction,
    recording_file: row.recording_file ?? null,
    legs: 1,
    node_id: row.node_id ?? null,
  };
}

/** Inserts calls, or folds each into the stored call of its (org, linkedid): one statement. */
async function upsertCalls(db: Db, records: readonly RecordOfOrg[]): Promise<void> {
  const earlier = sql<SqlBool>`(excluded.calldate < calls.calldate OR (excluded.calldate = calls.calldate AND excluded.first_sequence < calls.first_sequence))`;
  const pick = <T>(column: string) =>
    sql<T>`CASE WHEN ${earlier} THEN ${sql.ref(`excluded.${column}`)} ELSE ${sql.ref(`calls.${column}`)} END`;
  await db
    .insertInto("calls")
    .values(records.map(callRowOf))
    .onConflict((oc) =>
      oc.columns(["org_id", "linkedid"]).doUpdateSet({
        first_uniqueid: pick<string>("first_uniqueid"),
        first_sequence: pick<number>("first_sequence"),
        src: pick<string>("src"),
        dst: pick<string>("dst"),
        channel: pick<string>("channel"),
        dstchannel: pick<string>("dstchannel"),
        calldate: sql<string>`CASE WHEN excluded.calldate < calls.calldate THEN excluded.calldate ELSE calls.calldate END`,
        enddate: sql<
          string | null
        >`CASE WHEN calls.enddate IS NULL THEN excluded.enddate WHEN excluded.enddate IS NULL THEN calls.enddate WHEN excluded.enddate > calls.enddate THEN excluded.enddate ELSE calls.enddate END`,
        duration: sql<number>`CASE WHEN excluded.duration > calls.duration THEN excluded.duration ELSE calls.duration END`,
        billsec: sql<number>`CASE WHEN excluded.billsec > calls.billsec THEN excluded.billsec ELSE calls.billsec END`,
        disposition: sql<string>`CASE WHEN ${DISPOSITION_RANK("excluded.disposition")} > ${DISPOSITION_RANK("calls.disposition")} THEN excluded.disposition ELSE calls.disposition END`,
        direction: sql<CallDirection>`CASE WHEN ${DIRECTION_RANK("excluded.direction")} > ${DIRECTION_RANK("calls.direction")} THEN excluded.direction ELSE calls.direction END`,
        recording_file: sql<string | null>`coalesce(calls.recording_file, excluded.recording_file)`,
        legs: sql<number>`calls.legs + 1`,
      }),
    )
    .execute();
}

/**
 * Folds a newly stored record into its call (org, linkedid). Order-independent: the earliest
 * record (calldate, then sequence) speaks for src/dst/channel, the longest leg gives duration
 * and billsec, the best leg the disposition. Call it only for a record `insertCallRecord` added.
 */
export async function foldIntoCall(db: Db, orgId: string, row: NewCallRecordRow): Promise<void> {
  await upsertCalls(db, [{ orgId, row }]);
}

/**
 * `foldIntoCall` for many new records, in multi-row statements. One statement may fold a call
 * once only (PostgreSQL refuses to update a row twice in one upsert), so the records go in
 * rounds: the first record of each call, then the second, and so on; a call's records keep
 * their order (the recording file is the first one's).
 */
export async function foldIntoCalls(db: Db, records: readonly RecordOfOrg[]): Promise<void> {
  const rounds: RecordOfOrg[][] = [];
  const seen = new Map<string, number>();
  for (const record of records) {
    const call = `${record.orgId}\u0000${record.row.linkedid}`;
    const round = seen.get(call) ?? 0;
    seen.set(call, round + 1);
    if (round === rounds.length) rounds.push([]);
    rounds[round]!.push(record);
  }
  for (const round of rounds) {
    for (const chunk of ladderChunks(round)) await upsertCalls(db, chunk);
  }
}

function callsOf(db: Db, orgId: string, filters: CallFilters) {
  let query = db.selectFrom("calls").where("calls.org_id", "=", orgId);
  if (filters.from) query = query.where("calls.calldate", ">=", filters.from);
  if (filters.to) query = query.where("calls.calldate", "<", filters.to);
  if (filters.direction) query = query.where("calls.direction", "=", filters.direction);
  if (filters.disposition) query = query.where("calls.disposition", "=", filters.disposition);
  if (filters.number) {
    const like = `%${filters.number}%`;
    const likeIgnoringCase = caseInsensitiveLike(db);
    query = query.where((eb) =>
      eb.or([eb("calls.src", likeIgnoringCase, like), eb("calls.dst", likeIgnoringCase, like)]),
    );
  }
  if (filters.extension) {
    // The linkedids whose records name the extension, from two covering indexes (a few rows),
    // rather than a probe into the records of every call of the org.
    const legsWith = (column: "src" | "dst") =>
      db
        .selectFrom("call_records")
        .select("linkedid")
        .where("org_id", "=", orgId)
        .where(column, "=", filters.extension!);
    query = query.where("calls.linkedid", "in", legsWith("src").union(legsWith("dst")));
  }
  if (filters.numbers) {
    const numbers = filters.numbers.length > 0 ? [...filters.numbers] : [""];
    const legsWith = (column: "src" | "dst") =>
      db
        .selectFrom("call_records")
        .select("linkedid")
        .where("org_id", "=", orgId)
        .where(column, "in", numbers);
    query = query.where("calls.linkedid", "in", legsWith("src").union(legsWith("dst")));
  }
  if (filters.excludeLinkedIds && filters.excludeLinkedIds.length > 0) {
    query = query.where("calls.linkedid", "not in", filters.excludeLinkedIds);
  }
  return query;
}

/** One page of an org's calls, newest first, and how many match in all. */
export async function listCalls(
  db: Db,
  orgId: string,
  filters: CallFilters,
  page: { limit: number; offset: number },
): Promise<{ rows: CallRow[]; total: number }> {
  const rows = await callsOf(db, orgId, filters)
    .selectAll()
    .orderBy("calls.calldate", "desc")
    .orderBy("calls.linkedid", "desc")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const total = await countCallsMatching(db, orgId, filters);
  return { rows, total };
}

/** How many of an org's calls match. */
export async function countCallsMatching(
  db: Db,
  orgId: string,
  filters: CallFilters,
): Promise<number> {
  const counted = await callsOf(db, orgId, filters)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(counted.n);
}

export interface CallTotals {
  total: number;
  answered: number;
  missed: number;
  inbound: number;
  outbound: number;
  internal: number;
}

/** Totals of an org's matching calls by outcome and direction, in one pass over its range. */
export async function callTotals(db: Db, orgId: string, filters: CallFilters): Promise<CallTotals> {
  const row = await callsOf(db, orgId, filters)
    .select((eb) => [
      eb.fn.countAll<number>().as("total"),
      sql<number>`coalesce(sum(CASE WHEN calls.disposition = 'ANSWERED' THEN 1 ELSE 0 END), 0)`.as(
        "answered",
      ),
      sql<number>`coalesce(sum(CASE WHEN calls.disposition <> 'ANSWERED' THEN 1 ELSE 0 END), 0)`.as(
        "missed",
      ),
      sql<number>`coalesce(sum(CASE WHEN calls.direction = 'inbound' THEN 1 ELSE 0 END), 0)`.as(
        "inbound",
      ),
      sql<number>`coalesce(sum(CASE WHEN calls.direction = 'outbound' THEN 1 ELSE 0 END), 0)`.as(
        "outbound",
      ),
      sql<number>`coalesce(sum(CASE WHEN calls.direction = 'internal' THEN 1 ELSE 0 END), 0)`.as(
        "internal",
      ),
    ])
    .executeTakeFirstOrThrow();
  return {
    total: Number(row.total),
    answered: Number(row.answered),
    missed: Number(row.missed),
    inbound: Number(row.inbound),
    outbound: Number(row.outbound),
    internal: Number(row.internal),
  };
}

/** Every record of one call of the org, in the order the engine started them. */
export async function callRecordsOf(
  db: Db,
  orgId: string,
  linkedid: string,
): Promise<CallRecordRow[]> {
  return db
    .selectFrom("call_records")
    .selectAll()
    .where("org_id", "=", orgId)
    .where("linkedid", "=", linkedid)
    .orderBy("calldate")
    .orderBy("sequence")
    .orderBy("id")
    .execute();
}

/** The org ids and context prefixes rule 3 matches against (every org, whatever its status). */
export async function listOrgMarkers(db: Db): Promise<{ id: string; context_prefix: string }[]> {
  return db.selectFrom("organizations").select(["id", "context_prefix"]).execute();
}

/**
 * Moves whenever an org is added, so the call tracker can ask it on every event that names no
 * known org. SQLite: the highest rowid of the organizations table (never reused while a higher one
 * exists; one index probe). PostgreSQL has no rowid: see `orgMarkerGenerationPostgres`.
 */
export async function orgMarkerGeneration(db: Db): Promise<number> {
  if (storeDialect(db) === "postgres") return orgMarkerGenerationPostgres(db);
  const row = await db
    .selectFrom("organizations")
    .select(sql<number>`coalesce(max(rowid), 0)`.as("generation"))
    .executeTakeFirstOrThrow();
  return Number(row.generation);
}

/**
 * The newest org's creation time in milliseconds, times 1000, plus the org count modulo 1000: a
 * new org moves it (a later creation time, or one more org created in the same millisecond). Its
 * one blind spot, an org deleted and another created within the same millisecond, only delays
 * the new org's markers until the next one is added or the tracker restarts.
 */
async function orgMarkerGenerationPostgres(db: Db): Promise<number> {
  const row = await db
    .selectFrom("organizations")
    .select((eb) => [eb.fn.countAll<number>().as("count"), eb.fn.max("created_at").as("latest")])
    .executeTakeFirstOrThrow();
  const latest = row.latest ? Date.parse(row.latest) : 0;
  return latest * 1000 + (Number(row.count) % 1000);
}

/** Stores one journey event unless the same (uniqueid, event, timestamp) is stored. */
export async function insertCallEvent(db: Db, row: NewCallEventRow): Promise<boolean> {
  const result = await db
    .insertInto("call_events")
    .values(row)
    .onConflict((oc) => oc.columns(["uniqueid", "event", "timestamp"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** What earlier steps of a call say for its webhooks: the org's events of it, lean, any order. */
export async function callStepsOf(
  db: Db,
  orgId: string,
  linkedid: string,
): Promise<Pick<CallEventRow, "uniqueid" | "event" | "state">[]> {
  return db
    .selectFrom("call_events")
    .select(["uniqueid", "event", "state"])
    .where("org_id", "=", orgId)
    .where("linkedid", "=", linkedid)
    .execute();
}

/** The org's journey events of one call, in the engine's time order. */
export async function callEventsOf(
  db: Db,
  orgId: string,
  linkedid: string,
): Promise<CallEventRow[]> {
  return db
    .selectFrom("call_events")
    .selectAll()
    .where("org_id", "=", orgId)
    .where("linkedid", "=", linkedid)
    .orderBy("timestamp")
    .orderBy("id")
    .execute();
}
