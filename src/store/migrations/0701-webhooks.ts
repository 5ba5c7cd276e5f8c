// The webhooks table and the deliveries table (the outbox). Portable SQL: varchar/integer/text
// only, ISO-8601 UTC strings for instants (they sort as text), no SQLite-only features.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("webhooks")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    // No foreign key to organizations (as shipped; the org's deletion should delete its
    // webhooks; see docs/webhooks.md).
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("url", "varchar(2048)", (c) => c.notNull())
    .addColumn("events", "text", (c) => c.notNull())
    .addColumn("secret", "text")
    .addColumn("active", "integer", (c) => c.notNull())
    .addColumn("retry_count", "integer", (c) => c.notNull())
    .addColumn("timeout_ms", "integer", (c) => c.notNull())
    .addColumn("last_delivery", timeType(db))
    .addColumn("last_status", "integer")
    .addColumn("last_error", "varchar(500)")
    .addColumn("failure_count", "integer", (c) => c.notNull())
    .addColumn("failed_deliveries_in_row", "integer", (c) => c.notNull())
    .addColumn("deactivated_reason", "varchar(32)")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhooks_org").on("webhooks").column("org_id").execute();

  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("webhook_id", "varchar(36)", (c) => c.notNull())
    // Shared by the deliveries of one emitted event to several webhooks.
    .addColumn("event_id", "varchar(36)", (c) => c.notNull())
    // `<webhookId>_<event time in µs>`: the `webhook-id` header and the prefix of every body id.
    .addColumn("message_id", "varchar(100)", (c) => c.notNull())
    .addColumn("event_type", "varchar(64)", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", timeType(db))
    .addColumn("last_attempt_at", timeType(db))
    .addColumn("last_status", "integer")
    .addColumn("last_latency_ms", "integer")
    .addColumn("last_error", "varchar(500)")
    .addColumn("replay_of", "varchar(36)")
    .addColumn("claim_token", "varchar(36)")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_due")
    .on("webhook_deliveries")
    // Claims read this index in order: no sort however long the backlog.
    .columns(["status", "next_attempt_at", "message_id"])
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_webhook")
    .on("webhook_deliveries")
    .columns(["webhook_id", "created_at"])
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_claim")
    .on("webhook_deliveries")
    .column("claim_token")
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("webhook_deliveries").execute();
  await db.schema.dropTable("webhooks").execute();
}
