// Webhooks of an org, with the delivery-health fields the dispatcher maintains.
import { type Insertable, sql } from "kysely";
import type { DeactivatedReason, WebhookRecord } from "../model/webhook-records.js";
import type { Db } from "./database.js";
import { deleteOwned, updateOwned } from "./owned-rows.js";
import type { WebhooksTable } from "./schema.js";

export type WebhookPatch = Partial<
  Pick<WebhookRecord, "url" | "events" | "secret" | "active" | "retry_count" | "timeout_ms">
> & { deactivated_reason?: DeactivatedReason | null };

/** What a new webhook is configured with; everything else starts as "never delivered". */
export type NewWebhook = Pick<
  WebhookRecord,
  "id" | "org_id" | "url" | "events" | "secret" | "active" | "retry_count" | "timeout_ms"
>;

/** The row of a webhook created at `now`: no delivery yet, healthy, not deactivated. */
export function newWebhookRecord(webhook: NewWebhook, now: string): WebhookRecord {
  return {
    ...webhook,
    last_delivery: null,
    last_status: null,
    last_error: null,
    failure_count: 0,
    failed_deliveries_in_row: 0,
    deactivated_reason: null,
    last_event_micros: 0,
    created_at: now,
    updated_at: now,
  };
}

/** Repository of webhooks over a database or a transaction. */
export function createWebhookRepository(db: Db) {
  return {
    async insert<R extends Insertable<WebhooksTable>>(row: R): Promise<R> {
      await db.insertInto("webhooks").values(row).execute();
      return row;
    },

    /**
     * The `<timestamp>` of a new event for each webhook in `ids`: `candidate` (the event's time
     * in µs) or, when that is not above the webhook's last one, the last one + 1. Each webhook
     * row is updated, so its lock is held until the caller's transaction ends and two replicas
     * emitting at once get different values: `<webhookId>_<timestamp>` is unique per webhook
     * across the whole store. Rows are taken in id order, so two emitters never wait on each
     * other in a circle.
     */
    async nextEventMicros(ids: readonly string[], candidate: number): Promise<Map<string, number>> {
      const given = new Map<string, number>();
      for (const id of [...new Set(ids)].sort()) {
        const row = await db
          .updateTable("webhooks")
          .set((eb) => ({
            last_event_micros: sql<number>`case when ${eb.ref("last_event_micros")} >= ${candidate} then ${eb.ref("last_event_micros")} + 1 else ${candidate} end`,
          }))
          .where("id", "=", id)
          .returning("last_event_micros")
          .executeTakeFirst();
        // bigint: PostgreSQL's driver answers it as text.
        if (row) given.set(id, Number(row.last_event_micros));
      }
      return given;
    },

    /** The org's webhook `id`; undefined for unknown ids and other orgs' webhooks alike. */
    async findById(orgId: string, id: string): Promise<WebhookRecord | undefined> {
      return db
        .selectFrom("webhooks")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .executeTakeFirst();
    },

    /** Any org's webhook (the dispatcher works across orgs). */
    async findAnyById(id: string): Promise<WebhookRecord | undefined> {
      return db.selectFrom("webhooks").selectAll().where("id", "=", id).executeTakeFirst();
    },

    async listByOrg(orgId: string): Promise<WebhookRecord[]> {
      return db
        .selectFrom("webhooks")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
    },

    async listActiveByOrg(orgId: string): Promise<WebhookRecord[]> {
      return db
        .selectFrom("webhooks")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("active", "=", 1)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
    },

    /** Applies `patch`; true when the org's webhook exists. */
    update(orgId: string, id: string, patch: WebhookPatch, at: string): Promise<boolean> {
      return updateOwned(db, "webhooks", orgId, id, { ...patch, updated_at: at });
    },

    /** Deletes the org's webhook; true when it existed. */
    delete(orgId: string, id: string): Promise<boolean> {
      return deleteOwned(db, "webhooks", orgId, id);
    },

    /**
     * Health after a run of attempts: the last one's time, status and error; both failure runs
     * restart from zero when one of them succeeded, then grow by the failures after it.
     */
    async recordAttempts(
      id: string,
      run: {
        at: string;
        status: number | null;
        error: string | null;
        resetRuns: boolean;
        failedAttempts: number;
        failedDeliveries: number;
      },
    ): Promise<void> {
      await db
        .updateTable("webhooks")
        .set({
          last_delivery: run.at,
          last_status: run.status,
          last_error: run.error,
          failure_count: run.resetRuns
            ? run.failedAttempts
            : sql<number>`failure_count + ${run.failedAttempts}`,
          failed_deliveries_in_row: run.resetRuns
            ? run.failedDeliveries
            : sql<number>`failed_deliveries_in_row + ${run.failedDeliveries}`,
        })
        .where("id", "=", id)
        .execute();
    },

    /** Starts the failed-delivery run again (a webhook turned back on). */
    async resetFailedDeliveries(id: string): Promise<void> {
      await db
        .updateTable("webhooks")
        .set({ failed_deliveries_in_row: 0 })
        .where("id", "=", id)
        .execute();
    },

    /** Deliveries that ended `failed` since the last success. */
    async failedDeliveriesInRow(id: string): Promise<number> {
      const row = await db
        .selectFrom("webhooks")
        .select("failed_deliveries_in_row")
        .where("id", "=", id)
        .executeTakeFirst();
      return row?.failed_deliveries_in_row ?? 0;
    },

    /** The webhooks among `ids` that still exist (any org), by id. */
    async findManyByIds(ids: readonly string[]): Promise<Map<string, WebhookRecord>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom("webhooks")
        .selectAll()
        .where("id", "in", [...ids])
        .execute();
      return new Map(rows.map((row) => [row.id, row]));
    },

    /** Turns the webhook off and says why (visible in its health fields). */
    async deactivate(id: string, reason: DeactivatedReason, at: string): Promise<void> {
      await db
        .updateTable("webhooks")
        .set({ active: 0, deactivated_reason: reason, updated_at: at })
        .where("id", "=", id)
        .execute();
    },
  };
}

export type WebhookRepository = ReturnType<typeof createWebhookRepository>;
