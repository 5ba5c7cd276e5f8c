// A deploy record as people and scripts read it (`pbxctl deploy`, `rollback`, `apply` --json, and
// any API that reports a deploy): the one mapping from DeployRecord to its summary.
import type { DeployRecord } from "./deploy-log.js";

export interface DeployRecordSummary {
  unit: string;
  result: string;
  revision: string;
  filesWritten: string[];
  filesRemoved: string[];
  /** `<command> (<status>)` per reload. */
  reloads: string[];
  /** The engine's health status after the reloads, when one was checked. */
  health?: string;
  error?: string;
}

/** `<command> (<status>)` for each reload of the record. */
export function reloadLines(record: Pick<DeployRecord, "reloads">): string[] {
  return record.reloads.map((outcome) => `${outcome.command} (${outcome.status})`);
}

/** The summary of one record. */
export function summarizeRecord(record: DeployRecord): DeployRecordSummary {
  return {
    unit: record.unit,
    result: record.result,
    revision: record.revision,
    filesWritten: record.filesWritten,
    filesRemoved: record.filesRemoved,
    reloads: reloadLines(record),
    ...(record.health ? { health: record.health.status } : {}),
    ...(record.error ? { error: record.error } : {}),
  };
}

/** `+written -removed` file list of a record, for one output line. */
export function fileChanges(record: Pick<DeployRecord, "filesWritten" | "filesRemoved">): string[] {
  return [...record.filesWritten.map((f) => `+${f}`), ...record.filesRemoved.map((f) => `-${f}`)];
}
