// The outbox: one row per (event, webhook). Dispatchers (one per replica) claim due rows under a
// lease, record every attempt on its row, and a row whose lease ran out is claimed again.
import { sql } from "kysely";
import type { DeliveryRecord, DeliveryStatus } from "../model/webhook-records.js";
import type { Db } from "./database.js";
import { storeDialect } from "./dialect.js";

export type AttemptRecord = Pick<
  DeliveryRecord,
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
    async insertMany(rows: readonly DeliveryRecord[]): Promise<void> {
      if (rows.length === 0) return;
      await db
        .insertInto("webhook_deliveries")
        .values([...rows])
        .execute();
    },

    /**
     * Claims up to `limit` rows for one attempt each under `token`: in-flight rows whose lease
     * ran out (their replica died mid-attempt, or the store was restarted from before leases)
     * first, then pending rows due at `now`, oldest due first. A row is claimed until
     * `now + its webhook's timeout + leaseMarginMs`: past that another replica may claim it
     * again, with the same `webhook-id`. On PostgreSQL the rows are locked `FOR UPDATE SKIP
     * LOCKED`, so replicas claiming at once take different rows without waiting; on SQLite
     * writers are serialized and the conditional update gives each row to one caller.
     */
    async claimDue(
      now: string,
      limit: number,
      token: string,
      leaseMarginMs: number,
    ): Promise<DeliveryRecord[]> {
      const claim = async (handle: Db, locking: boolean): Promise<DeliveryRecord[]> => {
        const lock = <Q extends { forUpdate(): Q; skipLocked(): Q }>(query: Q): Q =>
          locking ? query.forUpdate().skipLocked() : query;
        const expired = await lock(
          handle
            .selectFrom("webhook_deliveries")
            .selectAll()
            .where("status", "=", "in_flight")
            .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", now)]))
            .orderBy("next_attempt_at")
            .orderBy("message_id")
            .limit(limit),
        ).execute();
        // The index order (status, next_attempt_at, message_id): no sort however long the
        // backlog; message ids of one webhook grow with event time, so its due events go out
        // in emit order.
        const due =
          expired.length >= limit
            ? []
            : await lock(
                handle
                  .selectFrom("webhook_deliveries")
                  .selectAll()
                  .where("status", "=", "pending")
                  .where("next_attempt_at", "<=", now)
                  .orderBy("next_attempt_at")
                  .orderBy("message_id")
                  .limit(limit - expired.length),
              ).execute();
        const rows = [...expired, ...due];
        if (rows.length === 0) return [];
        const timeouts = await handle
          .selectFrom("webhooks")
          .select(["id", "timeout_ms"])
          .where("id", "in", [...new Set(rows.map((row) => row.webhook_id))])
          .execute();
        const timeoutOf = new Map(timeouts.map((w) => [w.id, w.timeout_ms]));
        // One update per distinct lease (a batch has as many as it has distinct timeouts).
        const byLease = new Map<string, DeliveryRecord[]>();
        for (const row of rows) {
          const ms = (timeoutOf.get(row.webhook_id) ?? 0) + leaseMarginMs;
          const until = new Date(Date.parse(now) + ms).toISOString();
          byLease.set(until, [...(byLease.get(until) ?? []), row]);
        }
        const claimed: DeliveryRecord[] = [];
        for (const [until, group] of byLease) {
          const updated = await handle
            .updateTable("webhook_deliveries")
            .set({ status: "in_flight", claim_token: token, lease_until: until, updated_at: now })
            .where(
              "id",
              "in",
              group.map((row) => row.id),
            )
            // Still claimable: a CASE, not an OR of two conditions, because SQLite's planner
            // answers such an OR with the `due` index, reading every due row of the backlog
            // (20 ms per claim at 15,000 pending rows) instead of the few ids by primary key.
            .where((eb) =>
              eb
                .case()
                .when("status", "=", "pending")
                .then(eb("next_attempt_at", "<=", now))
                .when("status", "=", "in_flight")
                .then(eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", now)]))
                .else(sql<boolean>`false`)
                .end(),
            )
            .returning("id")
            .execute();
          const ours = new Set(updated.map((row) => row.id));
          for (const row of group) {
            if (!ours.has(row.id)) continue; // another dispatcher took it meanwhile
            claimed.push({
              ...row,
              status: "in_flight",
              claim_token: token,
              lease_until: until,
              updated_at: now,
            });
          }
        }
        return claimed.sort(
          (a, b) =>
            (a.next_attempt_at ?? "").localeCompare(b.next_attempt_at ?? "") ||
            a.message_id.localeCompare(b.message_id),
        );
      };
      if (storeDialect(db) === "postgres") {
        return db.transaction().execute((trx) => claim(trx, true));
      }
      return claim(db, false);
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

    async findById(
      orgId: string,
      webhookId: string,
      id: string,
    ): Promise<DeliveryRecord | undefined> {
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
    ): Promise<DeliveryRecord[]> {
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

    /**
     * Stores the outcome of an attempt on its row and releases the claim, if the claim is still
     * `claimToken`'s (null: a row sent without a claim, the test delivery): an attempt whose
     * lease ran out and whose row another replica claimed again leaves the row to that one.
     */
    async recordAttempt(
      id: string,
      record: AttemptRecord,
      at: string,
      claimToken: string | null,
    ): Promise<void> {
      await db
        .updateTable("webhook_deliveries")
        .set({ ...record, claim_token: null, lease_until: null, updated_at: at })
        .where("id", "=", id)
        .where((eb) =>
          claimToken === null ? eb("claim_token", "is", null) : eb("claim_token", "=", claimToken),
        )
        .execute();
    },

    /** Sets the status of one row (e.g. cancelled) and releases its claim. */
    async setStatus(id: string, status: DeliveryStatus, at: string): Promise<void> {
      await db
        .updateTable("webhook_deliveries")
        .set({
          status,
          next_attempt_at: null,
          claim_token: null,
          lease_until: null,
          updated_at: at,
        })
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
