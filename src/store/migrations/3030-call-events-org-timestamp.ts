// Issue 33: the retention purge deletes an org's journey steps older than its cutoff in bounded
// batches (src/store/call-history-purge.ts). Steps were indexed by (org_id, linkedid, timestamp)
// only, so "this org's steps before T" walked every step of the org for each batch; this index
// lets each batch read just the expired ones. On PostgreSQL the build holds off writes to
// call_events while it runs (over a large table, a step the ingest stores waits, or after the
// statement bound fails and is retried: docs/calls.md "When the store is unavailable").
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("call_events_org_timestamp")
    .on("call_events")
    .columns(["org_id", "timestamp"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("call_events_org_timestamp").execute();
}
