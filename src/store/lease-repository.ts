// Named leases (migration 2901): how replicas sharing one store agree on who runs a role that
// must run once. One conditional upsert decides, so it is the same on SQLite and PostgreSQL: the
// row is written when nobody holds it, when its holder renews, or when it expired; otherwise
// nothing is written and nothing returned. Times are the caller's clock (ISO 8601 UTC). Each
// row counts its terms (`epoch`, migration 2961) so a holder can fence what it does: `holds`
// checks that its term is still the current, unexpired one.
import { type Selectable, sql } from "kysely";
import type { Db } from "./database.js";
import type { LeasesTable } from "./schema.js";

export type LeaseRow = Selectable<LeasesTable>;

/** The expiry a released lease gets: long past, so anyone takes it at once. */
const RELEASED = "1970-01-01T00:00:00.000Z";

export function createLeaseRepository(db: Db) {
  return {
    /**
     * Takes or renews `name` for `holder` until `now + ttlMs`: the term (epoch) `holder` holds it
     * in now, or null when another holder's lease has not expired. A renewal before the expiry
     * keeps the term; taking it otherwise (another holder's, or one's own expired lease) starts
     * the next.
     */
    async acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<number | null> {
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
              epoch: sql<number>`case when ${eb.ref("leases.holder")} = ${eb.ref("excluded.holder")} and ${eb.ref("leases.expires_at")} > ${at} then ${eb.ref("leases.epoch")} else ${eb.ref("leases.epoch")} + 1 end`,
              holder: eb.ref("excluded.holder"),
              expires_at: eb.ref("excluded.expires_at"),
            }))
            .where((eb) =>
              eb.or([eb("leases.holder", "=", holder), eb("leases.expires_at", "<=", at)]),
            ),
        )
        .returning(["holder", "epoch"])
        .executeTakeFirst();
      return row?.holder === holder ? Number(row.epoch) : null;
    },

    /**
     * Whether `holder` still holds `name` in term `epoch` at `now` (not expired, not taken over):
     * the fence checked right before and after an action only the holder may take.
     */
    async holds(name: string, holder: string, epoch: number, now: Date): Promise<boolean> {
      const row = await db
        .selectFrom("leases")
        .select("name")
        .where("name", "=", name)
        .where("holder", "=", holder)
        .where("epoch", "=", epoch)
        .where("expires_at", ">", now.toISOString())
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Gives `name` up if `holder` holds it, so another replica need not wait for the expiry. The
     * row stays, expired, so its term count goes on.
     */
    async release(name: string, holder: string): Promise<void> {
      await db
        .updateTable("leases")
        .set({ expires_at: RELEASED })
        .where("name", "=", name)
        .where("holder", "=", holder)
        .execute();
    },

    /** One lease's row, expired or not; undefined when nobody ever took it. */
    find(name: string): Promise<LeaseRow | undefined> {
      return db.selectFrom("leases").selectAll().where("name", "=", name).executeTakeFirst();
    },

    /** Every lease row, expired or not (`GET /admin/replica-roles`, tests). */
    list(): Promise<LeaseRow[]> {
      return db.selectFrom("leases").selectAll().orderBy("name").execute();
    },
  };
}

export type LeaseRepository = ReturnType<typeof createLeaseRepository>;
