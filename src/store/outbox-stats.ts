// Read at each /metrics scrape: how much each outbox holds and how old its oldest waiting row is,
// and how far the ticket poller's cursor is behind the call records. One query each, on the
// (status, ...) indexes of the outboxes and the call records' primary key.
import { sql } from "kysely";
import type { Db } from "./database.js";

export interface WaitingRows {
  depth: number;
  /** `created_at` of the oldest waiting row (ISO text), null when none waits. */
  oldestCreatedAt: string | null;
}

async function waiting(
  db: Db,
  table: "webhook_deliveries" | "ticket_messages" | "ticket_poller_posts",
  statuses: readonly string[],
): Promise<WaitingRows> {
  const row = await db
    .selectFrom(table)
    .select([sql<number>`count(*)`.as("depth"), sql<string | null>`min(created_at)`.as("oldest")])
    .where(sql.ref<string>("status"), "in", statuses)
    .executeTakeFirst();
  return { depth: Number(row?.depth ?? 0), oldestCreatedAt: row?.oldest ?? null };
}

/** Webhook deliveries not yet delivered nor given up (pending or in flight). */
export function waitingWebhookDeliveries(db: Db): Promise<WaitingRows> {
  return waiting(db, "webhook_deliveries", ["pending", "in_flight"]);
}

/** Ticket messages not yet sent nor given up. */
export function waitingTicketMessages(db: Db): Promise<WaitingRows> {
  return waiting(db, "ticket_messages", ["pending"]);
}

/** The poller's POSTs to the intake not yet accepted. */
export function waitingIntakePosts(db: Db): Promise<WaitingRows> {
  return waiting(db, "ticket_poller_posts", ["pending"]);
}

/** `ingested_at` of the first call record after the ticket poller's cursor; null when none. */
export async function oldestUnpolledCallRecord(db: Db): Promise<string | null> {
  const row = await db
    .selectFrom("call_records")
    .select("ingested_at")
    .where(
      "id",
      ">",
      db
        .selectFrom("ticket_poller_state")
        .select("last_record_id")
        .where("name", "=", "call_records"),
    )
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
  return row?.ingested_at ?? null;
}
