// Deploy records and applied revisions (migration 0501), rows in, rows out. The deploy side's
// DeployLog (`src/deploy/store-deploy-log.ts`) maps them to its records. Each engine node keeps
// its own (migration 2980): records carry `node_id` ('' for the one implicit engine), applied
// revisions of a node are in `node_applied_revisions`.
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

const APPLIED_COLUMNS = ["unit", "revision", "applied_at", "deploy_id", "files", "stats"] as const;

type DeployTables = {
  deploy_records: DeployRecordRow & { node_id: string };
  applied_revisions: AppliedRevisionRow;
  node_applied_revisions: AppliedRevisionRow & { node_id: string };
};

/** The implicit engine's node id in `deploy_records` (an install with no engine node). */
export const IMPLICIT_ENGINE = "";

/**
 * Repository of deploy records over a database or a transaction: those of engine node `nodeId`,
 * or of the one implicit engine when absent.
 */
export function createDeployRecordRepository(database: Db, nodeId?: string) {
  const db = database.withTables<DeployTables>();
  const node = nodeId ?? IMPLICIT_ENGINE;
  return {
    async insertRecord(row: DeployRecordRow): Promise<void> {
      await db
        .insertInto("deploy_records")
        .values({ ...row, node_id: node })
        .execute();
    },

    /** Records as JSON, newest first, of one unit or all. */
    async recentRecords(options: { unit?: string; limit: number }): Promise<string[]> {
      let query = db.selectFrom("deploy_records").select("record").where("node_id", "=", node);
      if (options.unit !== undefined) query = query.where("unit", "=", options.unit);
      const rows = await query
        .orderBy("started_at", "desc")
        .orderBy("id", "desc")
        .limit(options.limit)
        .execute();
      return rows.map((row) => row.record);
    },

    async findApplied(unit: string): Promise<AppliedRevisionRow | undefined> {
      if (nodeId !== undefined) {
        return db
          .selectFrom("node_applied_revisions")
          .select(APPLIED_COLUMNS)
          .where("node_id", "=", nodeId)
          .where("unit", "=", unit)
          .executeTakeFirst();
      }
      return db
        .selectFrom("applied_revisions")
        .selectAll()
        .where("unit", "=", unit)
        .executeTakeFirst();
    },

    async listApplied(): Promise<AppliedRevisionRow[]> {
      if (nodeId !== undefined) {
        return db
          .selectFrom("node_applied_revisions")
          .select(APPLIED_COLUMNS)
          .where("node_id", "=", nodeId)
          .orderBy("unit")
          .execute();
      }
      return db.selectFrom("applied_revisions").selectAll().orderBy("unit").execute();
    },

    /** Inserts or replaces the unit's applied revision. */
    async upsertApplied(row: AppliedRevisionRow): Promise<void> {
      // ON CONFLICT ... DO UPDATE works the same in SQLite and PostgreSQL.
      const changes = {
        revision: row.revision,
        applied_at: row.applied_at,
        deploy_id: row.deploy_id,
        files: row.files,
        stats: row.stats,
      };
      if (nodeId !== undefined) {
        await db
          .insertInto("node_applied_revisions")
          .values({ ...row, node_id: nodeId })
          .onConflict((oc) => oc.columns(["node_id", "unit"]).doUpdateSet(changes))
          .execute();
        return;
      }
      await db
        .insertInto("applied_revisions")
        .values(row)
        .onConflict((oc) => oc.column("unit").doUpdateSet(changes))
        .execute();
    },
  };
}

/**
 * What node `nodeId`'s engine runs is forgotten with the node, in the transaction that removes
 * it: no deployer of that id will ever read it (ids are never reused). Its deploy records stay,
 * as the history of what was deployed there.
 */
export async function forgetAppliedOfNode(trx: Db, nodeId: string): Promise<void> {
  await trx
    .withTables<DeployTables>()
    .deleteFrom("node_applied_revisions")
    .where("node_id", "=", nodeId)
    .execute();
}
