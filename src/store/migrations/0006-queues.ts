// Call queues and their members (by user extension).
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("queues")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("number", "varchar(15)", (c) => c.notNull())
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("strategy", "varchar(20)", (c) => c.notNull())
    .addColumn("moh", "varchar(40)", (c) => c.notNull())
    .addColumn("max_wait", "integer", (c) => c.notNull())
    .addColumn("timeout_destination_type", "varchar(10)", (c) => c.notNull())
    .addColumn("timeout_destination", "varchar(64)")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .addUniqueConstraint("queues_org_number", ["org_id", "number"])
    .execute();
  await db.schema
    .createTable("queue_members")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("queue_id", "varchar(36)", (c) =>
      c.notNull().references("queues.id").onDelete("cascade"),
    )
    .addColumn("extension", "varchar(15)", (c) => c.notNull())
    .addColumn("penalty", "integer", (c) => c.notNull())
    .addColumn("ring_time", "integer", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addUniqueConstraint("queue_members_queue_extension", ["queue_id", "extension"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("queue_members").execute();
  await db.schema.dropTable("queues").execute();
}
