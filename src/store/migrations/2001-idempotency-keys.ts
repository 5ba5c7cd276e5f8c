// Idempotency keys of the call-originating endpoints (issue 12, SPEC.md §4.5): a request repeated
// with the same `Idempotency-Key` by the same org gets the first answer back and places no second
// call. The key is claimed (a row with no answer yet) before the engine is asked, so two
// concurrent repeats cannot both originate; the primary key starts with org_id, so one org's keys
// never meet another's.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("idempotency_keys")
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("key", "varchar(255)", (c) => c.notNull())
    // Which operation and which body the key was first used with: a different request under the
    // same key is refused rather than answered with another request's result.
    .addColumn("operation", "varchar(64)", (c) => c.notNull())
    .addColumn("request_hash", "varchar(64)", (c) => c.notNull())
    // Null while the first request is still running.
    .addColumn("status", "integer")
    .addColumn("response", "text")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["org_id", "key"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("idempotency_keys").execute();
}
