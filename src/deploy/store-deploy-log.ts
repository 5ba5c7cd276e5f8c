// The DeployLog of the server: deploy records and applied revisions in the store (migration
// 0501), so the server, `pbxctl apply` and `/config/status` read one record, and two processes
// deploying into one engine directory never overwrite each other's view with a stale cache.
import type { Db } from "../store/database.js";
import type { AppliedRevision, DeployLog, DeployRecord, FileStamp } from "./deploy-log.js";

type DeployTables = {
  deploy_records: {
    id: string;
    unit: string;
    revision: string;
    result: string;
    trigger: string;
    started_at: string;
    record: string;
  };
  applied_revisions: {
    unit: string;
    revision: string;
    applied_at: string;
    deploy_id: string;
    files: string;
    stats: string | null;
  };
};

/** A DeployLog over the store's `deploy_records` and `applied_revisions` tables. */
export class StoreDeployLog implements DeployLog {
  private readonly db;

  constructor(db: Db) {
    this.db = db.withTables<DeployTables>();
  }

  async record(entry: DeployRecord): Promise<void> {
    await this.db
      .insertInto("deploy_records")
      .values({
        id: entry.id,
        unit: entry.unit,
        revision: entry.revision,
        result: entry.result,
        trigger: entry.trigger,
        started_at: entry.startedAt,
        record: JSON.stringify(entry),
      })
      .execute();
  }

  async applied(unit: string): Promise<AppliedRevision | null> {
    const row = await this.db
      .selectFrom("applied_revisions")
      .selectAll()
      .where("unit", "=", unit)
      .executeTakeFirst();
    return row ? appliedFromRow(row) : null;
  }

  async allApplied(): Promise<AppliedRevision[]> {
    const rows = await this.db
      .selectFrom("applied_revisions")
      .selectAll()
      .orderBy("unit")
      .execute();
    return rows.map(appliedFromRow);
  }

  async markApplied(applied: AppliedRevision): Promise<void> {
    const row = {
      unit: applied.unit,
      revision: applied.revision,
      applied_at: applied.appliedAt,
      deploy_id: applied.deployId,
      files: JSON.stringify(applied.files),
      stats: applied.stats ? JSON.stringify(applied.stats) : null,
    };
    // ON CONFLICT ... DO UPDATE works the same in SQLite and PostgreSQL.
    await this.db
      .insertInto("applied_revisions")
      .values(row)
      .onConflict((oc) =>
        oc.column("unit").doUpdateSet({
          revision: row.revision,
          applied_at: row.applied_at,
          deploy_id: row.deploy_id,
          files: row.files,
          stats: row.stats,
        }),
      )
      .execute();
  }

  async recent(options: { unit?: string; limit?: number } = {}): Promise<DeployRecord[]> {
    let query = this.db.selectFrom("deploy_records").select("record");
    if (options.unit !== undefined) query = query.where("unit", "=", options.unit);
    const rows = await query
      .orderBy("started_at", "desc")
      .orderBy("id", "desc")
      .limit(options.limit ?? 50)
      .execute();
    return rows.map((row) => JSON.parse(row.record) as DeployRecord);
  }
}

function appliedFromRow(row: DeployTables["applied_revisions"]): AppliedRevision {
  const applied: AppliedRevision = {
    unit: row.unit,
    revision: row.revision,
    files: JSON.parse(row.files) as Record<string, string>,
    appliedAt: row.applied_at,
    deployId: row.deploy_id,
  };
  if (row.stats !== null) applied.stats = JSON.parse(row.stats) as Record<string, FileStamp>;
  return applied;
}
