// Time conditions (issue 27 item 6): an org's business-hours schedules, each a weekly list of
// ranges and dated exceptions (JSON, read and written whole with the schedule) in an IANA time
// zone, with an open and a closed destination. A DID, an IVR option or a queue timeout routes to
// one by the spelling `time_condition`, which is longer than the queue timeout column's 10
// characters: PostgreSQL enforces that length, so the column widens to the DID column's 20
// (SQLite ignores declared lengths).
import { type Kysely, sql } from "kysely";
import type { Db } from "../database.js";
import { storeDialect } from "../dialect.js";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("time_conditions")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "varchar(28)", (c) => c.notNull())
    .addColumn("description", "varchar(500)", (c) => c.notNull())
    .addColumn("time_zone", "varchar(64)", (c) => c.notNull())
    .addColumn("ranges", "text", (c) => c.notNull())
    .addColumn("exceptions", "text", (c) => c.notNull())
    .addColumn("open_destination_type", "varchar(20)", (c) => c.notNull())
    .addColumn("open_destination", "varchar(64)")
    .addColumn("closed_destination_type", "varchar(20)", (c) => c.notNull())
    .addColumn("closed_destination", "varchar(64)")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .addUniqueConstraint("time_conditions_org_name", ["org_id", "name"])
    .execute();
  if (storeDialect(db as unknown as Db) === "postgres") {
    await sql`ALTER TABLE queues ALTER COLUMN timeout_destination_type TYPE varchar(20)`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("time_conditions").execute();
}
