// Platform users (people signing in through the identity provider) with a role in one org.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("org_users")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("email", "varchar(320)", (c) => c.notNull())
    .addColumn("subject", "varchar(255)")
    .addColumn("name", "varchar(100)")
    .addColumn("role", "varchar(20)", (c) => c.notNull())
    .addColumn("status", "varchar(20)", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .addUniqueConstraint("org_users_org_email", ["org_id", "email"])
    .execute();
  await db.schema.createIndex("org_users_email").on("org_users").column("email").execute();
  await db.schema.createIndex("org_users_subject").on("org_users").column("subject").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("org_users").execute();
}
