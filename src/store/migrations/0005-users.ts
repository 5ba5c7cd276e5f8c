// SIP users (extensions) of an org.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("users")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("extension", "varchar(15)", (c) => c.notNull())
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("routing_type", "varchar(20)", (c) => c.notNull())
    .addColumn("status", "varchar(20)", (c) => c.notNull())
    .addColumn("ring_target", "varchar(10)", (c) => c.notNull())
    .addColumn("phone_number", "varchar(20)")
    .addColumn("ring_time", "integer", (c) => c.notNull())
    .addColumn("outbound_did", "varchar(20)")
    .addColumn("call_recording", "integer", (c) => c.notNull())
    .addColumn("sip_md5_cred", "varchar(32)")
    .addColumn("sip_password_env", "varchar(64)")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .addUniqueConstraint("users_org_extension", ["org_id", "extension"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("users").execute();
}
