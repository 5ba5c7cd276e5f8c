// Named leases (migration 2901): how replicas sharing one store agree on who runs a role that
// must run once. One conditional upsert decides, so it is the same on SQLite and PostgreSQL: the
// row is written when nobody holds it, when its holder renews, or when it expired; otherwise
// nothing is written and nothing returned. Times are the caller's clock (ISO 8601 UTC).
import { sql } from "kysely";
import type { Db } from "./database.js";
import type { LeasesTable } from "./schema.js";

export type LeaseRow = LeasesTable;

export function createLeaseRepository(db: Db) {
  return {
    /**
     * Takes or renews `name` for `holder` until `now + ttlMs`: true when `holder` holds it now,
     * false when another holder's lease has not expired.
     */
    async acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
      const at = now.toISOString();
      const row = await db
        .insertInto("leases")
        .values({
          name,
          holder,
          acquired_at: at,
          expires_at: new Date(now.getTime() + ttlMs).toISOString(),
        })
        .onConflict((oc) =>
          oc
            .column("name")
            .doUpdateSet((eb) => ({
              // A renewal keeps the time the holder first took it.
              acquired_at: sql<string>`case when ${eb.ref("leases.holder")} = ${eb.ref("excluded.holder")} then ${eb.ref("leases.acquired_at")} else ${eb.ref("excluded.acquired_at")} end`,
              holder: eb.ref("excluded.holder"),
              expires_at: eb.ref("excluded.expires_at"),
            }))
            .where((eb) =>
              eb.or([eb("leases.holder", "=", holder), eb("leases.expires_at", "<=", at)]),
            ),
        )
        .returning("holder")
        .executeTakeFirst();
      return row?.holder === holder;
    },

    /** Gives `name` up if `holder` holds it, so another replica need not wait for the expiry. */
    async release(name: string, holder: string): Promise<void> {
      await db.deleteFrom("leases").where("name", "=", name).where("holder", "=", holder).execute();
    },

    /** Every lease row, expired or not (for `/health` and tests). */
    list(): Promise<LeaseRow[]> {
      return db.selectFrom("leases").selectAll().orderBy("name").execute();
    },
  };
}

export type LeaseRepository = ReturnType<typeof createLeaseRepository>;
