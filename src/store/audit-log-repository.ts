// The audit log (migration 2601): appended to, read by org, purged only through the gate the
// append-only triggers honour. There is deliberately no update or delete function here.
import { type Insertable, sql } from "kysely";
import type { AuditLogRow, AuditLogTable } from "./compliance-tables.js";
import type { Db } from "./database.js";

export type NewAuditRecord = Omit<Insertable<AuditLogTable>, "id">;

/** Appends one record; answers its id. */
export async function appendAuditRecord(db: Db, record: NewAuditRecord): Promise<number> {
  const row = await db
    .insertInto("audit_log")
    .values(record)
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

export interface AuditFilter {
  actorKind?: string;
  actorId?: string;
  resourceType?: string;
  resourceId?: string;
  action?: string;
  /** ISO 8601, inclusive. */
  from?: string;
  /** ISO 8601, exclusive. */
  to?: string;
}

/** An audit row with the deploy revision its change led to (null: none yet, or none asked). */
export type AuditRowWithDeploy = AuditLogRow & { deploy_revision: string | null };

/**
 * The org's records matching `filter`, oldest first, `limit` at a time after `afterId` (keyset:
 * an export walks the whole log without holding it). The deploy revision is the first successful
 * deploy of the org's unit that started at or after the record (the deploy that applied it).
 */
export async function auditPage(
  db: Db,
  orgId: AuditScope,
  filter: AuditFilter,
  page: { afterId?: number; limit?: number; offset?: number },
): Promise<AuditRowWithDeploy[]> {
  let query = db
    .selectFrom("audit_log as a")
    .leftJoin("organizations as o", "o.id", "a.org_id")
    .selectAll("a")
    .select(
      sql<string | null>`(SELECT d.revision FROM deploy_records d
        WHERE a.schedules_deploy = 1 AND d.unit = 'org:' || o.context_prefix
          AND d.started_at >= a.created_at AND d.result IN ('ok', 'unchanged')
        ORDER BY d.started_at LIMIT 1)`.as("deploy_revision"),
    );
  query = applyFilter(scoped(query, orgId), filter);
  if (page.afterId !== undefined) query = query.where("a.id", ">", page.afterId);
  query = query.orderBy("a.created_at").orderBy("a.id");
  if (page.limit !== undefined) query = query.limit(page.limit);
  if (page.offset !== undefined) query = query.offset(page.offset);
  return (await query.execute()) as AuditRowWithDeploy[];
}

/** How many of the org's records match `filter`. */
export async function countAudit(db: Db, orgId: AuditScope, filter: AuditFilter): Promise<number> {
  const query = applyFilter(
    scoped(
      db.selectFrom("audit_log as a").select((eb) => eb.fn.countAll<number>().as("n")),
      orgId,
    ),
    filter,
  );
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One org's records, the records of no org (`null`), or every record (`"*"`, the admin's view). */
export type AuditScope = string | null | "*";

// biome-ignore lint/suspicious/noExplicitAny: one scope for the select and the count builders
function scoped<Q extends { where: (...args: any[]) => any }>(query: Q, orgId: AuditScope): Q {
  if (orgId === "*") return query;
  return orgId === null ? query.where("a.org_id", "is", null) : query.where("a.org_id", "=", orgId);
}

// biome-ignore lint/suspicious/noExplicitAny: one filter for the select and the count builders
function applyFilter<Q extends { where: (...args: any[]) => any }>(
  query: Q,
  filter: AuditFilter,
): Q {
  let q = query;
  if (filter.actorKind !== undefined) q = q.where("a.actor_kind", "=", filter.actorKind);
  if (filter.actorId !== undefined) q = q.where("a.actor_id", "=", filter.actorId);
  if (filter.resourceType !== undefined) q = q.where("a.resource_type", "=", filter.resourceType);
  if (filter.resourceId !== undefined) q = q.where("a.resource_id", "=", filter.resourceId);
  if (filter.action !== undefined) q = q.where("a.action", "=", filter.action);
  if (filter.from !== undefined) q = q.where("a.created_at", ">=", filter.from);
  if (filter.to !== undefined) q = q.where("a.created_at", "<", filter.to);
  return q;
}

/** Counts (or, unless `dryRun`, deletes) the org's records created before `cutoff`. */
export async function purgeAuditBefore(
  db: Db,
  orgId: string,
  cutoff: string,
  dryRun: boolean,
): Promise<number> {
  const count = async (trx: Db) =>
    Number(
      (
        await trx
          .selectFrom("audit_log")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("org_id", "=", orgId)
          .where("created_at", "<", cutoff)
          .executeTakeFirstOrThrow()
      ).n,
    );
  if (dryRun) return count(db);
  // The gate opens for this org only, and only inside this transaction.
  return db.transaction().execute(async (trx) => {
    await trx.insertInto("audit_purge_gate").values({ org_id: orgId }).execute();
    const result = await trx
      .deleteFrom("audit_log")
      .where("org_id", "=", orgId)
      .where("created_at", "<", cutoff)
      .executeTakeFirst();
    await trx.deleteFrom("audit_purge_gate").where("org_id", "=", orgId).execute();
    return Number(result.numDeletedRows);
  });
}
