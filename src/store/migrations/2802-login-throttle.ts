// Failed-login counts and locks (issue 28 item 10), one row per throttled key: an account at a
// source address, or a source address over all accounts. In the store, not in memory, so every
// API replica on one database sees the same counts: a guesser cannot multiply its rate by the
// number of replicas.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("login_throttle")
    .addColumn("key", "varchar(200)", (c) => c.primaryKey())
    .addColumn("failures", "integer", (c) => c.notNull())
    .addColumn("last_failure_at", "varchar(32)", (c) => c.notNull())
    .addColumn("locked_until", "varchar(32)")
    .execute();
  // Old rows are swept by age.
  await db.schema
    .createIndex("login_throttle_last_failure")
    .on("login_throttle")
    .column("last_failure_at")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("login_throttle").execute();
}
