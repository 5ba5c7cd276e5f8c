// Auto-tickets (SPEC.md §2 "Ticket", §4.7): the tickets and their history of changes, the
// intake's record of every call it was sent (idempotent by org and linkedid), the call-record
// poller's cursor and its own outbox of POSTs, the ticket-opened message outbox (provider
// message and workflow trigger), the messaging settings, ticket alerts and WhatsApp templates.
import { type Kysely, sql } from "kysely";
import { currentTime, serialKey, serialType, timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("tickets")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("source", "varchar(20)", (c) => c.notNull())
    .addColumn("priority", "varchar(10)", (c) => c.notNull())
    .addColumn("status", "varchar(12)", (c) => c.notNull())
    .addColumn("phone", "varchar(80)", (c) => c.notNull())
    .addColumn("channel_id", "varchar(200)", (c) => c.notNull())
    .addColumn("linkedid", "varchar(150)", (c) => c.notNull())
    .addColumn("assignee", "varchar(200)")
    .addColumn("note", "text")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("tickets_org_created")
    .on("tickets")
    .columns(["org_id", "created_at", "id"])
    .execute();
  // The repeat-caller lookup: an org's open ticket of one number.
  await db.schema
    .createIndex("tickets_org_phone_status")
    .on("tickets")
    .columns(["org_id", "phone", "status"])
    .execute();

  await db.schema
    .createTable("ticket_history")
    .addColumn("id", serialType(db), serialKey(db))
    .addColumn("ticket_id", "varchar(36)", (c) =>
      c.notNull().references("tickets.id").onDelete("cascade"),
    )
    .addColumn("at", timeType(db), (c) => c.notNull())
    .addColumn("actor", "varchar(200)", (c) => c.notNull())
    .addColumn("action", "varchar(20)", (c) => c.notNull())
    // JSON object: field -> {from, to}.
    .addColumn("changes", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("ticket_history_ticket")
    .on("ticket_history")
    .columns(["ticket_id", "id"])
    .execute();

  // Every call the intake accepted, once per (org, linkedid): a POST repeated by the poller (a
  // lost answer, a restart) changes nothing, and a crash before classification loses nothing.
  await db.schema
    .createTable("ticket_intake")
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("linkedid", "varchar(150)", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("status", "varchar(10)", (c) => c.notNull())
    .addColumn("outcome", "varchar(40)")
    .addColumn("ticket_id", "varchar(36)")
    .addColumn("received_at", timeType(db), (c) => c.notNull())
    .addColumn("decided_at", timeType(db))
    .addPrimaryKeyConstraint("ticket_intake_pk", ["org_id", "linkedid"])
    .execute();
  await db.schema
    .createIndex("ticket_intake_status")
    .on("ticket_intake")
    .columns(["status", "received_at"])
    .execute();

  await db.schema
    .createTable("ticket_poller_state")
    .addColumn("name", "varchar(40)", (c) => c.primaryKey())
    .addColumn("last_record_id", serialType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  // A store upgraded with calls in it starts polling after them: the calls of before the upgrade
  // are history, not tickets to open now.
  await sql`INSERT INTO ticket_poller_state (name, last_record_id, updated_at)
    SELECT 'call_records', coalesce(max(id), 0), ${currentTime(db)} FROM call_records`.execute(db);
  // The calls the poller found, written with its cursor in one transaction, sent until the
  // intake accepts them: a failed POST is retried, never lost and never sent as a second call.
  await db.schema
    .createTable("ticket_poller_posts")
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("linkedid", "varchar(150)", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("status", "varchar(10)", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", timeType(db), (c) => c.notNull())
    .addColumn("last_error", "text")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addPrimaryKeyConstraint("ticket_poller_posts_pk", ["org_id", "linkedid"])
    .execute();
  await db.schema
    .createIndex("ticket_poller_posts_due")
    .on("ticket_poller_posts")
    .columns(["status", "next_attempt_at"])
    .execute();

  // The ticket-opened messages (provider message, workflow trigger), written in the ticket's
  // transaction with their exact body.
  await db.schema
    .createTable("ticket_messages")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("ticket_id", "varchar(36)", (c) => c.notNull())
    .addColumn("kind", "varchar(12)", (c) => c.notNull())
    .addColumn("target_url", "varchar(2048)")
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("status", "varchar(10)", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", timeType(db), (c) => c.notNull())
    .addColumn("last_status", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("ticket_messages_due")
    .on("ticket_messages")
    .columns(["status", "next_attempt_at"])
    .execute();

  // The one messaging provider of the platform (WhatsApp Business Cloud API shape).
  await db.schema
    .createTable("messaging_provider")
    .addColumn("id", "varchar(20)", (c) => c.primaryKey())
    .addColumn("base_url", "varchar(2048)", (c) => c.notNull())
    .addColumn("phone_number_id", "varchar(64)", (c) => c.notNull())
    // Sealed with the server key; never answered back.
    .addColumn("access_token", "text")
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("ticket_messaging_config")
    .addColumn("org_id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("enabled", "integer", (c) => c.notNull())
    .addColumn("template_name", "varchar(512)", (c) => c.notNull())
    .addColumn("language", "varchar(20)", (c) => c.notNull())
    .addColumn("workflow_url", "varchar(2048)")
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("ticket_alerts")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("name", "varchar(200)", (c) => c.notNull())
    .addColumn("channel", "varchar(20)", (c) => c.notNull())
    .addColumn("recipient", "varchar(2048)", (c) => c.notNull())
    // JSON arrays of sources and priorities.
    .addColumn("sources", "text", (c) => c.notNull())
    .addColumn("priorities", "text", (c) => c.notNull())
    .addColumn("active", "integer", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("ticket_alerts_org")
    .on("ticket_alerts")
    .columns(["org_id", "created_at"])
    .execute();

  await db.schema
    .createTable("whatsapp_templates")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("name", "varchar(512)", (c) => c.notNull())
    .addColumn("language", "varchar(20)", (c) => c.notNull())
    .addColumn("category", "varchar(20)", (c) => c.notNull())
    .addColumn("body_text", "text", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("whatsapp_templates_name_language")
    .on("whatsapp_templates")
    .columns(["name", "language"])
    .unique()
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "whatsapp_templates",
    "ticket_alerts",
    "ticket_messaging_config",
    "messaging_provider",
    "ticket_messages",
    "ticket_poller_posts",
    "ticket_poller_state",
    "ticket_intake",
    "ticket_history",
    "tickets",
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
