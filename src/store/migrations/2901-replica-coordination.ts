// Several `pbxctl serve` replicas on one store (issue 23): what they coordinate through lives in
// the database, so any replica can die without taking a change, a delivery or a role with it.
// - `leases`: one row per role that must run once (the deployer of an engine, its call-event
//   ingest, the ticket poller, the retention purge); a holder renews its row, another replica
//   takes it once `expires_at` has passed.
// - `deploy_requests`: a save on any replica bumps its org's `seq`; the deployer-lease holder
//   deploys orgs whose `seq` is above `done_seq` and raises `done_seq` to what it covered.
// - `webhooks.last_event_micros`: the last `<timestamp>` given to one of the webhook's events;
//   each event takes the next one under the webhook row's lock, so `<webhookId>_<timestamp>` is
//   unique whichever replica emits.
// - `webhook_deliveries.lease_until`: an attempt in flight is claimed until then; past it, the
//   row is due again for any replica (a replica killed mid-delivery leaves nothing stuck).
import { type Kysely, sql } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("leases")
    .addColumn("name", "varchar(200)", (c) => c.primaryKey())
    .addColumn("holder", "varchar(200)", (c) => c.notNull())
    .addColumn("acquired_at", timeType(db), (c) => c.notNull())
    .addColumn("expires_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("deploy_requests")
    .addColumn("org_id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("seq", "integer", (c) => c.notNull())
    // The highest `seq` a successful deploy covered: pending while `seq` is above it. Never
    // reset, so a deployer's memory of what it scheduled stays valid.
    .addColumn("done_seq", "integer", (c) => c.notNull().defaultTo(0))
    // The replica of the last save: the deployer schedules its own replica's saves directly and
    // only needs to pick up the others' from here.
    .addColumn("requested_by", "varchar(200)", (c) => c.notNull())
    .addColumn("requested_at", timeType(db), (c) => c.notNull())
    .execute();
  // The deployer's poll reads only the pending rows, however many orgs the table has seen.
  await db.schema
    .createIndex("deploy_requests_pending")
    .on("deploy_requests")
    .column("org_id")
    .where(sql.ref("seq"), ">", sql.ref("done_seq"))
    .execute();
  await db.schema
    .alterTable("webhooks")
    .addColumn("last_event_micros", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable("webhook_deliveries").addColumn("lease_until", timeType(db)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("webhook_deliveries").dropColumn("lease_until").execute();
  await db.schema.alterTable("webhooks").dropColumn("last_event_micros").execute();
  await db.schema.dropTable("deploy_requests").execute();
  await db.schema.dropTable("leases").execute();
}
