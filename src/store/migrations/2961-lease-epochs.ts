// Fencing for the roles' leases (issue 23): `epoch` counts the terms of a lease. It goes up each
// time the lease is taken rather than renewed in time (by another replica, or by the same one
// after its lease ran out, e.g. a process paused past its expiry), so a holder can check, right
// before and after an action that must happen once at a time (an engine reload), that its term
// is still the current one. A released lease keeps its row (expired at once) so the count never
// starts again at 1 and an old term can never match a new one.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("leases")
    .addColumn("epoch", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("leases").dropColumn("epoch").execute();
}
