// SIP trunks of an org.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("trunks")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "varchar(32)", (c) => c.notNull())
    .addColumn("host", "varchar(255)", (c) => c.notNull())
    .addColumn("port", "integer", (c) => c.notNull())
    .addColumn("transport", "varchar(10)", (c) => c.notNull())
    .addColumn("username", "varchar(64)")
    .addColumn("password", "varchar(128)")
    .addColumn("password_env", "varchar(64)")
    .addColumn("registration", "integer", (c) => c.notNull())
    .addColumn("codecs", "text", (c) => c.notNull())
    .addColumn("match_hosts", "text", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .addUniqueConstraint("trunks_org_name", ["org_id", "name"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("trunks").execute();
}
