// IVR menus and their options (one per digit).
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("ivrs")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("extension", "varchar(15)", (c) => c.notNull())
    .addColumn("description", "varchar(500)", (c) => c.notNull())
    .addColumn("timeout", "integer", (c) => c.notNull())
    .addColumn("max_retries", "integer", (c) => c.notNull())
    .addColumn("status", "varchar(20)", (c) => c.notNull())
    .addColumn("greeting_language", "varchar(40)", (c) => c.notNull())
    .addColumn("greeting_voice", "varchar(60)", (c) => c.notNull())
    .addColumn("greeting_prompt", "varchar(64)")
    .addColumn("direct_extension_dial", "integer", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .addUniqueConstraint("ivrs_org_extension", ["org_id", "extension"])
    .execute();
  await db.schema
    .createTable("ivr_options")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("ivr_id", "varchar(36)", (c) =>
      c.notNull().references("ivrs.id").onDelete("cascade"),
    )
    .addColumn("digit", "varchar(8)", (c) => c.notNull())
    .addColumn("action_type", "varchar(32)", (c) => c.notNull())
    .addColumn("action_destination", "varchar(64)")
    .addColumn("description", "varchar(200)", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addUniqueConstraint("ivr_options_ivr_digit", ["ivr_id", "digit"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("ivr_options").execute();
  await db.schema.dropTable("ivrs").execute();
}
