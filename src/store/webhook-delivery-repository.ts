// The outbox: one row per (event, webhook). The dispatcher claims due rows, records every
// attempt on its row, and a restart makes rows left in flight due again.
import type { Db } from "./database.js";
import type { DeliveryRow, DeliveryStatus } from "./schema.js";

export type AttemptRecord = Pick<
  DeliveryRow,
  | "status"
  | "attempt"
  | "next_attempt_at"
  | "last_attempt_at"
  | "last_status"
  | "last_latency_ms"
  | "last_error"
>;

/** Repository of deliveries over a database or a transaction. */
export function createDeliveryRepository(db: Db) {
  return {
    async insertMany(rows: readonly DeliveryRow[]): Promise<void> {
      if (rows.length === 0) return;
      await db
        .insertInto("webhook_deliveries")
        .values([...rows])
        .execute();
    },

    /**
     * Marks up to `limit` pending rows due at `now` as in flight under `token` and returns them,
     * oldest due first. The conditional update makes a row claimed by one caller only.
     */
    async claimDue(now: string, limit: number, token: string): Promise<DeliveryRow[]> {
      // The index order (status, next_attempt_at, message_id): no sort however long the backlog;
      // message ids of one webhook grow with event time, so its due events go out in emit order.
      const due = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("status", "=", "pending")
        .where("next_attempt_at", "<=", now)
        .orderBy("next_attempt_at")
        .orderBy("message_id")
        .limit(limit)
        .execute();
      if (due.length === 0) return [];
      const claimed = await db
        .updateTable("webhook_deliveries")
        .set({ status: "in_flight", claim_token: token, updated_at: now })
        .where(
          "id",
          "in",
          due.map((row) => row.id),
        )
        .where("status", "=", "pending")
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === due.length) {
        return due.map((row) => ({
          ...row,
          status: "in_flight",
          claim_token: token,
          updated_at: now,
        }));
      }
      // Another dispatcher took some of them between the two statements: keep what is ours.
      return db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("claim_token", "=", token)
        .where("status", "=", "in_flight")
        .orderBy("next_attempt_at")
        .orderBy("message_id")
        .execute();
    },

    /** The earliest `next_attempt_at` of a pending row, if any. */
    async nextDueAt(): Promise<string | undefined> {
      const row = await db
        .selectFrom("webhook_deliveries")
        .select(({ fn }) => fn.min("next_attempt_at").as("at"))
        .where("status", "=", "pending")
        .executeTakeFirst();
      return (row?.at as string | null | undefined) ?? undefined;
    },

    async findById(orgId: string, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
      return db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("webhook_id", "=", webhookId)
        .where("id", "=", id)
        .executeTakeFirst();
    },

    /** The webhook's most recent deliveries, newest first. */
    async listByWebhook(
      orgId: string,
      webhookId: string,
      limit: number,
      offset = 0,
    ): Promise<DeliveryRow[]> {
      return db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("webhook_id", "=", webhookId)
        .orderBy("created_at", "desc")
        .orderBy("message_id", "desc")
        .limit(limit)
        .offset(offset)
        .execute();
    },

    /** How many deliveries the webhook has (the total of a paged listing). */
    async countByWebhook(orgId: string, webhookId: string): Promise<number> {
      const row = await db
        .selectFrom("webhook_deliveries")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("org_id", "=", orgId)
        .where("webhook_id", "=", webhookId)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },

    /** Stores the outcome of an attempt on its row and releases the claim. */
    async recordAttempt(id: string, record: AttemptRecord, at: string): Promise<void> {
      await db
        .updateTable("webhook_deliveries")
        .set({ ...record, claim_token: null, updated_at: at })
        .where("id", "=", id)
        .execute();
    },

    /** Sets the status of one row (e.g. cancelled) and releases its claim. */
    async setStatus(id: string, status: DeliveryStatus, at: string): Promise<void> {
      await db
        .updateTable("webhook_deliveries")
        .set({ status, next_attempt_at: null, claim_token: null, updated_at: at })
        .where("id", "=", id)
        .execute();
    },

    /** Cancels the webhook's pending rows (rows in flight finish their attempt); returns how many. */
    async cancelPending(webhookId: string, at: string): Promise<number> {
      const result = await db
        .updateTable("webhook_deliveries")
        .set({ status: "cancelled", next_attempt_at: null, updated_at: at })
        .where("webhook_id", "=", webhookId)
        .where("status", "=", "pending")
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /**
     * Makes every in-flight row due again at `now` (at start-up, after a crash). Assumes one
     * dispatcher per database: a second live one would see its in-flight rows sent twice.
     */
    async releaseInFlight(now: string): Promise<number> {
      const result = await db
        .updateTable("webhook_deliveries")
        .set({ status: "pending", next_attempt_at: now, claim_token: null, updated_at: now })
        .where("status", "=", "in_flight")
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** Row counts by status (health checks, tests, the bench). */
    async countByStatus(): Promise<Partial<Record<DeliveryStatus, number>>> {
      const rows = await db
        .selectFrom("webhook_deliveries")
        .select(["status", (eb) => eb.fn.countAll<number>().as("n")])
        .groupBy("status")
        .execute();
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },
  };
}

export type DeliveryRepository = ReturnType<typeof createDeliveryRepository>;
