// Granular per-org API keys (`ak_`), stored as digests.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("api_keys")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("key_digest", "varchar(64)", (c) => c.notNull().unique())
    .addColumn("key_prefix", "varchar(16)", (c) => c.notNull())
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("permissions", "text", (c) => c.notNull())
    .addColumn("revoked_at", timeType(db))
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema.createIndex("api_keys_org").on("api_keys").column("org_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("api_keys").execute();
}
