// The DeployLog of the server: deploy records and applied revisions in the store (migration
// 0501), so the server, `pbxctl apply` and `/config/status` read one record, and two processes
// deploying into one engine directory never overwrite each other's view with a stale cache.
import type { Db } from "../store/database.js";
import {
  type AppliedRevisionRow,
  createDeployRecordRepository,
} from "../store/deploy-record-repository.js";
import type { AppliedRevision, DeployLog, DeployRecord, FileStamp } from "./deploy-log.js";

/** A DeployLog over the store's `deploy_records` and `applied_revisions` tables. */
export class StoreDeployLog implements DeployLog {
  private readonly repo;

  /** `nodeId`: the records of that engine node (issue 25); absent: the one implicit engine's. */
  constructor(db: Db, nodeId?: string) {
    this.repo = createDeployRecordRepository(db, nodeId);
  }

  async record(entry: DeployRecord): Promise<void> {
    await this.repo.insertRecord({
      id: entry.id,
      unit: entry.unit,
      revision: entry.revision,
      result: entry.result,
      trigger: entry.trigger,
      started_at: entry.startedAt,
      record: JSON.stringify(entry),
    });
  }

  async applied(unit: string): Promise<AppliedRevision | null> {
    const row = await this.repo.findApplied(unit);
    return row ? appliedFromRow(row) : null;
  }

  async allApplied(): Promise<AppliedRevision[]> {
    return (await this.repo.listApplied()).map(appliedFromRow);
  }

  async markApplied(applied: AppliedRevision): Promise<void> {
    await this.repo.upsertApplied({
      unit: applied.unit,
      revision: applied.revision,
      applied_at: applied.appliedAt,
      deploy_id: applied.deployId,
      files: JSON.stringify(applied.files),
      stats: applied.stats ? JSON.stringify(applied.stats) : null,
    });
  }

  async recent(options: { unit?: string; limit?: number } = {}): Promise<DeployRecord[]> {
    const records = await this.repo.recentRecords({
      unit: options.unit,
      limit: options.limit ?? 50,
    });
    return records.map((record) => JSON.parse(record) as DeployRecord);
  }
}

function appliedFromRow(row: AppliedRevisionRow): AppliedRevision {
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
