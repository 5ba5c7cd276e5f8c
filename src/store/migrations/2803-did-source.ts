// Where a DID came from (issue 28 item 9): `pool` (the platform's: added by an admin, assigned
// through the pool or by `pbxctl apply`) or `org` (added by the org itself with `POST /dids`).
// Only pool numbers are dispatched by the shared inbound gateway; an org's own numbers reach it
// over its own trunks. Numbers stored before this migration are taken as the platform's (`pool`):
// which of them an org added itself was not recorded.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("dids")
    .addColumn("source", "varchar(8)", (c) => c.notNull().defaultTo("pool"))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("dids").dropColumn("source").execute();
}
