// Call records from the engine's `Cdr` events (one row per record Asterisk posts) and calls (one
// row per org and linkedid, folded from those records at ingest), SPEC.md §2 "Call record".
// Every listing reads by org first: the org is derived once at ingest (SPEC.md §1 rule 3) and
// each index starts with org_id, so no query of one org walks another org's rows.
// No foreign key to organizations: records outlive the objects they mention, and a record of an
// org deleted later must still be stored when its event is replayed.
import type { Kysely } from "kysely";
import { serialKey, serialType, timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("call_records")
    .addColumn("id", serialType(db), serialKey(db))
    // Null when no rule 3 clause matched (e.g. the carrier's leg): stored, never listed.
    .addColumn("org_id", "varchar(36)")
    .addColumn("uniqueid", "varchar(150)", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addColumn("linkedid", "varchar(150)", (c) => c.notNull())
    .addColumn("calldate", timeType(db), (c) => c.notNull())
    .addColumn("answerdate", timeType(db))
    .addColumn("enddate", timeType(db))
    .addColumn("src", "varchar(80)", (c) => c.notNull())
    .addColumn("dst", "varchar(80)", (c) => c.notNull())
    .addColumn("dcontext", "varchar(80)", (c) => c.notNull())
    .addColumn("clid", "varchar(160)", (c) => c.notNull())
    .addColumn("channel", "varchar(80)", (c) => c.notNull())
    .addColumn("dstchannel", "varchar(80)", (c) => c.notNull())
    .addColumn("lastapp", "varchar(80)", (c) => c.notNull())
    .addColumn("lastdata", "varchar(256)", (c) => c.notNull())
    .addColumn("duration", "integer", (c) => c.notNull())
    .addColumn("billsec", "integer", (c) => c.notNull())
    .addColumn("disposition", "varchar(16)", (c) => c.notNull())
    .addColumn("accountcode", "varchar(80)", (c) => c.notNull())
    .addColumn("peeraccount", "varchar(80)", (c) => c.notNull())
    .addColumn("direction", "varchar(10)", (c) => c.notNull())
    .addColumn("recording_file", "varchar(256)")
    .addColumn("ingested_at", timeType(db), (c) => c.notNull())
    .execute();
  // A replayed event (reconnect, restart, a second listener) must never add a second row.
  await db.schema
    .createIndex("call_records_event")
    .on("call_records")
    .columns(["uniqueid", "sequence"])
    .unique()
    .execute();
  await db.schema
    .createIndex("call_records_org_linkedid")
    .on("call_records")
    .columns(["org_id", "linkedid", "calldate"])
    .execute();
  await db.schema
    .createIndex("call_records_org_calldate")
    .on("call_records")
    .columns(["org_id", "calldate"])
    .execute();
  // The history's extension filter: which calls have a leg from or to an extension.
  for (const column of ["src", "dst"]) {
    await db.schema
      .createIndex(`call_records_org_${column}`)
      .on("call_records")
      .columns(["org_id", column, "linkedid"])
      .execute();
  }

  await db.schema
    .createTable("calls")
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("linkedid", "varchar(150)", (c) => c.notNull())
    // The first record of the call (earliest calldate, then lowest sequence) speaks for it.
    .addColumn("first_uniqueid", "varchar(150)", (c) => c.notNull())
    .addColumn("first_sequence", "integer", (c) => c.notNull())
    .addColumn("calldate", timeType(db), (c) => c.notNull())
    .addColumn("enddate", timeType(db))
    .addColumn("src", "varchar(80)", (c) => c.notNull())
    .addColumn("dst", "varchar(80)", (c) => c.notNull())
    .addColumn("channel", "varchar(80)", (c) => c.notNull())
    .addColumn("dstchannel", "varchar(80)", (c) => c.notNull())
    .addColumn("duration", "integer", (c) => c.notNull())
    .addColumn("billsec", "integer", (c) => c.notNull())
    .addColumn("disposition", "varchar(16)", (c) => c.notNull())
    .addColumn("direction", "varchar(10)", (c) => c.notNull())
    .addColumn("recording_file", "varchar(256)")
    .addColumn("legs", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("calls_pk", ["org_id", "linkedid"])
    .execute();
  await db.schema
    .createIndex("calls_org_calldate")
    .on("calls")
    .columns(["org_id", "calldate", "linkedid"])
    .execute();

  // The steps of a call (dial, bridge, queue, hangup...) for its journey, ordered by the
  // engine's own event time; only those of a channel rule 3 gives to an org.
  await db.schema
    .createTable("call_events")
    .addColumn("id", serialType(db), serialKey(db))
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("linkedid", "varchar(150)", (c) => c.notNull())
    .addColumn("uniqueid", "varchar(150)", (c) => c.notNull())
    .addColumn("event", "varchar(40)", (c) => c.notNull())
    // Asterisk's `<epoch>.<microseconds>`, zero-padded so it sorts as text.
    .addColumn("timestamp", "varchar(24)", (c) => c.notNull())
    .addColumn("channel", "varchar(200)", (c) => c.notNull())
    .addColumn("state", "varchar(32)", (c) => c.notNull())
    .addColumn("context", "varchar(80)", (c) => c.notNull())
    .addColumn("exten", "varchar(80)", (c) => c.notNull())
    // JSON object of the event's own fields (destination channel, dial status, queue...).
    .addColumn("detail", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("call_events_event")
    .on("call_events")
    .columns(["uniqueid", "event", "timestamp"])
    .unique()
    .execute();
  await db.schema
    .createIndex("call_events_org_linkedid")
    .on("call_events")
    .columns(["org_id", "linkedid", "timestamp"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("call_events").execute();
  await db.schema.dropTable("calls").execute();
  await db.schema.dropTable("call_records").execute();
}
