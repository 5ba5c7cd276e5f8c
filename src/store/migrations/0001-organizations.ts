// Organizations (tenants) with their hashed/encrypted credentials and request state.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("organizations")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("slug", "varchar(63)", (c) => c.unique())
    .addColumn("type", "varchar(20)", (c) => c.notNull())
    .addColumn("status", "varchar(20)", (c) => c.notNull())
    .addColumn("context_prefix", "varchar(48)", (c) => c.notNull().unique())
    .addColumn("recording_enabled", "integer", (c) => c.notNull())
    .addColumn("max_concurrent_calls", "integer", (c) => c.notNull())
    .addColumn("api_key_digest", "varchar(64)", (c) => c.notNull().unique())
    .addColumn("api_key_encrypted", "text", (c) => c.notNull())
    .addColumn("api_secret_hash", "text", (c) => c.notNull())
    .addColumn("request_status", "varchar(20)")
    .addColumn("requested_by_email", "varchar(320)")
    .addColumn("decided_at", timeType(db))
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("organizations_request_status")
    .on("organizations")
    .column("request_status")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("organizations").execute();
}
