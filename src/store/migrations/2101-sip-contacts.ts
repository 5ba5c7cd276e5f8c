// The phones' registered contacts as the engine last reported them (issue 12c): `user.registered`
// and `user.unregistered` are emitted only when an AOR's contact set turns non-empty or empty, so
// a replayed `ContactStatus` event (reconnect, restart of the service) changes nothing and emits
// nothing. The primary key starts with org_id, so one org's rows never meet another's.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("sip_contacts")
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("aor", "varchar(255)", (c) => c.notNull())
    .addColumn("uri", "varchar(1024)", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addPrimaryKeyConstraint("sip_contacts_pk", ["org_id", "aor", "uri"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("sip_contacts").execute();
}
