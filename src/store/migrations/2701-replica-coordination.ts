// Several `pbxctl serve` replicas on one store (issue 23): what they coordinate through lives in
// the database, so any replica can die without taking a change, a delivery or a role with it.
// - `leases`: one row per role that must run once (the deployer of an engine, its call-event
//   ingest, the ticket poller, the retention purge); a holder renews its row, another replica
//   takes it once `expires_at` has passed.
// - `deploy_requests`: a save on any replica bumps its org's `seq`; the deployer-lease holder
//   deploys orgs whose requests it has not handled and removes the rows it covered.
// - `webhooks.last_event_micros`: the last `<timestamp>` given to one of the webhook's events;
//   each event takes the next one under the webhook row's lock, so `<webhookId>_<timestamp>` is
//   unique whichever replica emits.
// - `webhook_deliveries.lease_until`: an attempt in flight is claimed until then; past it, the
//   row is due again for any replica (a replica killed mid-delivery leaves nothing stuck).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("leases")
    .addColumn("name", "varchar(200)", (c) => c.primaryKey())
    .addColumn("holder", "varchar(200)", (c) => c.notNull())
    .addColumn("acquired_at", "varchar(32)", (c) => c.notNull())
    .addColumn("expires_at", "varchar(32)", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("deploy_requests")
    .addColumn("org_id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("requested_at", "varchar(32)", (c) => c.notNull())
    .execute();
  await db.schema
    .alterTable("webhooks")
    .addColumn("last_event_micros", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("webhook_deliveries")
    .addColumn("lease_until", "varchar(32)")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("webhook_deliveries").dropColumn("lease_until").execute();
  await db.schema.alterTable("webhooks").dropColumn("last_event_micros").execute();
  await db.schema.dropTable("deploy_requests").execute();
  await db.schema.dropTable("leases").execute();
}
