// The intake's record of calls it accepted, the call-record poller's cursor and its outbox of
// POSTs to the intake (migration 2401).
import type { CallRecordRow } from "./call-tables.js";
import type { Db } from "./database.js";
import type { TicketIntakeTable } from "./ticket-tables.js";

const CURSOR = "call_records";

/** The intake's calls, idempotent by (org, linkedid). */
export function createTicketIntakeRepository(db: Db) {
  return {
    /** Records a call unless this (org, linkedid) was seen; true when it is new. */
    async accept(orgId: string, linkedid: string, payload: string, at: string): Promise<boolean> {
      const result = await db
        .insertInto("ticket_intake")
        .values({
          org_id: orgId,
          linkedid,
          payload,
          status: "pending",
          outcome: null,
          ticket_id: null,
          received_at: at,
          decided_at: null,
        })
        .onConflict((oc) => oc.columns(["org_id", "linkedid"]).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    /** Calls accepted but not yet classified (left by a crash), oldest first. */
    pending(): Promise<TicketIntakeTable[]> {
      return db
        .selectFrom("ticket_intake")
        .selectAll()
        .where("status", "=", "pending")
        .orderBy("received_at")
        .execute();
    },

    find(orgId: string, linkedid: string): Promise<TicketIntakeTable | undefined> {
      return db
        .selectFrom("ticket_intake")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("linkedid", "=", linkedid)
        .executeTakeFirst();
    },

    async decide(
      orgId: string,
      linkedid: string,
      outcome: string,
      ticketId: string | null,
      at: string,
    ): Promise<void> {
      await db
        .updateTable("ticket_intake")
        .set({ status: "done", outcome, ticket_id: ticketId, decided_at: at })
        .where("org_id", "=", orgId)
        .where("linkedid", "=", linkedid)
        .execute();
    },
  };
}

export interface PollerPost {
  org_id: string;
  linkedid: string;
  body: string;
  attempts: number;
  created_at: string;
}

/**
 * The records of an org's calls, in the order stored. By org first: a linkedid is the engine's,
 * not unique across orgs (one engine per node, an org moved between nodes), and the index
 * `call_records_org_linkedid` (org_id, linkedid, calldate; migration 1201) serves it, where a
 * lookup by linkedid alone read the whole table (EXPLAIN: test/tickets/poller-lookup.test.ts).
 */
export function recordsOfCallsQuery(db: Db, orgId: string, linkedids: readonly string[]) {
  return db
    .selectFrom("call_records")
    .selectAll()
    .where("org_id", "=", orgId)
    .where("linkedid", "in", linkedids)
    .orderBy("id");
}

/** The poller's cursor over call_records and its outbox of intake POSTs. */
export function createTicketPollerRepository(db: Db) {
  return {
    /** The id of the last call record the poller has looked at (0 before the first look). */
    async cursor(): Promise<number> {
      const row = await db
        .selectFrom("ticket_poller_state")
        .select("last_record_id")
        .where("name", "=", CURSOR)
        .executeTakeFirst();
      return row?.last_record_id ?? 0;
    },

    async setCursor(lastRecordId: number, at: string): Promise<void> {
      await db
        .insertInto("ticket_poller_state")
        .values({ name: CURSOR, last_record_id: lastRecordId, updated_at: at })
        .onConflict((oc) =>
          oc.column("name").doUpdateSet({ last_record_id: lastRecordId, updated_at: at }),
        )
        .execute();
    },

    /** Call records after `afterId`, in id order, at most `limit`. */
    recordsAfter(afterId: number, limit: number): Promise<CallRecordRow[]> {
      return db
        .selectFrom("call_records")
        .selectAll()
        .where("id", ">", afterId)
        .orderBy("id")
        .limit(limit)
        .execute();
    },

    /** Every record of one org's calls named, for picking each call's longest leg. */
    recordsOfCalls(orgId: string, linkedids: readonly string[]): Promise<CallRecordRow[]> {
      if (linkedids.length === 0) return Promise.resolve([]);
      return recordsOfCallsQuery(db, orgId, linkedids).execute();
    },

    /** Queues a POST unless this call was queued before; true when new. */
    async enqueue(orgId: string, linkedid: string, body: string, at: string): Promise<boolean> {
      const result = await db
        .insertInto("ticket_poller_posts")
        .values({
          org_id: orgId,
          linkedid,
          body,
          status: "pending",
          attempts: 0,
          next_attempt_at: at,
          last_error: null,
          created_at: at,
        })
        .onConflict((oc) => oc.columns(["org_id", "linkedid"]).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    /** POSTs due at `now`, oldest first. */
    due(now: string, limit: number): Promise<PollerPost[]> {
      return db
        .selectFrom("ticket_poller_posts")
        .select(["org_id", "linkedid", "body", "attempts", "created_at"])
        .where("status", "=", "pending")
        .where("next_attempt_at", "<=", now)
        .orderBy("created_at")
        .orderBy("linkedid")
        .limit(limit)
        .execute();
    },

    async markSent(orgId: string, linkedid: string, attempts: number): Promise<void> {
      await db
        .updateTable("ticket_poller_posts")
        .set({ status: "sent", attempts, last_error: null })
        .where("org_id", "=", orgId)
        .where("linkedid", "=", linkedid)
        .execute();
    },

    async markFailed(
      orgId: string,
      linkedid: string,
      attempts: number,
      error: string,
      nextAttemptAt: string,
    ): Promise<void> {
      await db
        .updateTable("ticket_poller_posts")
        .set({ attempts, last_error: error, next_attempt_at: nextAttemptAt })
        .where("org_id", "=", orgId)
        .where("linkedid", "=", linkedid)
        .execute();
    },
  };
}
