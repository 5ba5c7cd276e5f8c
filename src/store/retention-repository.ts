// Retention policies per org and kind (migration 2601). The purge of expired call history is
// call-history-purge.ts.
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
