// Issue 23: every index a tenant's request reads starts with org_id, so on a shared PostgreSQL no
// org's listing walks another org's rows. Two did not: a webhook's deliveries (read by org and
// webhook) and the extension claims of one owner (an owner belongs to one org). The indexes left
// without org_id are platform-wide by design: primary keys and global uniqueness (ids, key
// digests, DID numbers, WireGuard interfaces and ports, the engine's event ids), the background
// workers' queues across all orgs (due deliveries, tickets' outboxes) and the admin's pool views.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("webhook_deliveries_org_webhook")
    .on("webhook_deliveries")
    .columns(["org_id", "webhook_id", "created_at", "message_id"])
    .execute();
  await db.schema.dropIndex("webhook_deliveries_webhook").execute();
  await db.schema
    .createIndex("extension_claims_org_owner")
    .on("extension_claims")
    .columns(["org_id", "owner_type", "owner_id"])
    .execute();
  await db.schema.dropIndex("extension_claims_owner").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("extension_claims_owner")
    .on("extension_claims")
    .columns(["owner_type", "owner_id"])
    .execute();
  await db.schema.dropIndex("extension_claims_org_owner").execute();
  await db.schema
    .createIndex("webhook_deliveries_webhook")
    .on("webhook_deliveries")
    .columns(["webhook_id", "created_at"])
    .execute();
  await db.schema.dropIndex("webhook_deliveries_org_webhook").execute();
}
