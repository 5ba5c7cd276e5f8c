// Deploy records and applied revisions (migration 0501), rows in, rows out. The deploy side's
// DeployLog (`src/deploy/store-deploy-log.ts`) maps them to its records.
import type { Db } from "./database.js";

export interface DeployRecordRow {
  id: string;
  unit: string;
  revision: string;
  result: string;
  trigger: string;
  started_at: string;
  /** The whole record as JSON. */
  record: string;
}

export interface AppliedRevisionRow {
  unit: string;
  revision: string;
  applied_at: string;
  deploy_id: string;
  /** JSON: file path -> content hash. */
  files: string;
  /** JSON: file path -> stamp, or null. */
  stats: string | null;
}

type DeployTables = { deploy_records: DeployRecordRow; applied_revisions: AppliedRevisionRow };

/** Repository of deploy records over a database or a transaction. */
export function createDeployRecordRepository(database: Db) {
  const db = database.withTables<DeployTables>();
  return {
    async insertRecord(row: DeployRecordRow): Promise<void> {
      await db.insertInto("deploy_records").values(row).execute();
    },

    /** Records as JSON, newest first, of one unit or all. */
    async recentRecords(options: { unit?: string; limit: number }): Promise<string[]> {
      let query = db.selectFrom("deploy_records").select("record");
      if (options.unit !== undefined) query = query.where("unit", "=", options.unit);
      const rows = await query
        .orderBy("started_at", "desc")
        .orderBy("id", "desc")
        .limit(options.limit)
        .execute();
      return rows.map((row) => row.record);
    },

    async findApplied(unit: string): Promise<AppliedRevisionRow | undefined> {
      return db
        .selectFrom("applied_revisions")
        .selectAll()
        .where("unit", "=", unit)
        .executeTakeFirst();
    },

    async listApplied(): Promise<AppliedRevisionRow[]> {
      return db.selectFrom("applied_revisions").selectAll().orderBy("unit").execute();
    },

    /** Inserts or replaces the unit's applied revision. */
    async upsertApplied(row: AppliedRevisionRow): Promise<void> {
      // ON CONFLICT ... DO UPDATE works the same in SQLite and PostgreSQL.
      await db
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
    },
  };
}
