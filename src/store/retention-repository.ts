// Retention policies per org and kind (migration 2601) and the purge of expired call records.
import { sql } from "kysely";
import type { Db } from "./database.js";

/** The org's stored policies, by kind (a kind never set is absent). */
export async function retentionPolicies(
  db: Db,
  orgId: string,
): Promise<Map<string, number | null>> {
  const rows = await db
    .selectFrom("retention_policies")
    .select(["kind", "days"])
    .where("org_id", "=", orgId)
    .execute();
  return new Map(rows.map((row) => [row.kind, row.days]));
}

/** Replaces the org's policies for the kinds given (null: keep forever), in one transaction. */
export async function saveRetentionPolicies(
  db: Db,
  orgId: string,
  policies: Record<string, number | null>,
  now: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const [kind, days] of Object.entries(policies)) {
      await trx
        .insertInto("retention_policies")
        .values({ org_id: orgId, kind, days, updated_at: now })
        .onConflict((oc) => oc.columns(["org_id", "kind"]).doUpdateSet({ days, updated_at: now }))
        .execute();
    }
  });
}

/** Every org with at least one policy that expires something (days not null). */
export async function orgsWithRetention(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom("retention_policies")
    .select("org_id")
    .where("days", "is not", null)
    .groupBy("org_id")
    .orderBy("org_id")
    .execute();
  return rows.map((row) => row.org_id);
}

/**
 * Counts (or, unless `dryRun`, deletes) the org's call records started before `cutoff` (ISO),
 * with the org's calls and journey steps of the same age, in one transaction. Answers the number
 * of call records.
 */
export async function purgeCallRecordsBefore(
  db: Db,
  orgId: string,
  cutoff: Date,
  dryRun: boolean,
): Promise<number> {
  const iso = cutoff.toISOString();
  const count = Number(
    (
      await db
        .selectFrom("call_records")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("org_id", "=", orgId)
        .where("calldate", "<", iso)
        .executeTakeFirstOrThrow()
    ).n,
  );
  if (dryRun) return count;
  // Journey steps carry the engine's `<epoch>.<micros>`, padded to 12 digits (call-ingest.ts).
  const epoch = `${String(Math.floor(cutoff.getTime() / 1000)).padStart(12, "0")}.000000`;
  return db.transaction().execute(async (trx) => {
    const deleted = await trx
      .deleteFrom("call_records")
      .where("org_id", "=", orgId)
      .where("calldate", "<", iso)
      .executeTakeFirst();
    await trx.deleteFrom("calls").where("org_id", "=", orgId).where("calldate", "<", iso).execute();
    await trx
      .deleteFrom("call_events")
      .where("org_id", "=", orgId)
      .where(sql.ref("timestamp"), "<", epoch)
      .execute();
    return Number(deleted.numDeletedRows);
  });
}
