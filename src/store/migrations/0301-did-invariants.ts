// The database's share of the DID rules: at most one default DID per org, and at most one pending
// request per pool number. Partial unique indexes, so concurrent writers cannot both win; the
// same statement is valid in SQLite and PostgreSQL.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create unique index dids_one_default_per_org on dids (org_id) where is_default = 1`.execute(
    db,
  );
  await sql`create unique index did_requests_one_pending on did_requests (did_id) where status = 'pending'`.execute(
    db,
  );
  await db.schema.createIndex("did_requests_org").on("did_requests").column("org_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("did_requests_org").execute();
  await db.schema.dropIndex("did_requests_one_pending").execute();
  await db.schema.dropIndex("dids_one_default_per_org").execute();
}
