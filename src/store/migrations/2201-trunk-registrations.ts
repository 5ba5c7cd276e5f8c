// The org trunks' outbound registrations as the engine last reported them (issue 12d):
// `trunk.registered` / `trunk.failed` are emitted only when a registration's status changes, so
// a re-listing after a reconnect, a refresh of a registration or a restart of the service changes
// nothing and emits nothing. The primary key starts with org_id, so one org's rows never meet
// another's.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("trunk_registrations")
    .addColumn("org_id", "varchar(36)", (c) => c.notNull())
    .addColumn("registration", "varchar(255)", (c) => c.notNull())
    .addColumn("status", "varchar(32)", (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .addPrimaryKeyConstraint("trunk_registrations_pk", ["org_id", "registration"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("trunk_registrations").execute();
}
