// The audit records of `pbxctl apply` (issue 16): one per org the run changed, by actor `cli`,
// with the org's exported state (secrets as references, then redacted) before and after.
import { randomUUID } from "node:crypto";
import type { Db } from "../store/database.js";
import { loadOrgState } from "../store/load-org-state.js";
import { createOrganizationRepository } from "../store/organization-repository.js";
import type { OrgApplyResult } from "./apply.js";
import { recordAudit } from "./audit-log.js";
import { exportState } from "./export.js";

/** The org as `pbxctl export` would write it, or null when the store has no such org. */
export async function orgSnapshot(db: Db, orgId: string): Promise<unknown> {
  const exists = await createOrganizationRepository(db).findHandle(orgId);
  return exists ? exportState(await loadOrgState(db, orgId)).data : null;
}

/** Snapshots of the orgs an apply is about to change, by org id. */
export async function snapshotOrgs(
  db: Db,
  orgIds: readonly string[],
): Promise<Map<string, unknown>> {
  const snapshots = new Map<string, unknown>();
  for (const orgId of orgIds) snapshots.set(orgId, await orgSnapshot(db, orgId));
  return snapshots;
}

/**
 * Appends one record per applied org that changed (an unchanged org wrote nothing), all under
 * one run id as their request id. `deploys`: the run deploys the orgs it applied.
 */
export async function auditApplied(
  db: Db,
  now: Date,
  results: readonly OrgApplyResult[],
  before: ReadonlyMap<string, unknown>,
  deploys: boolean,
  runId: string = randomUUID(),
): Promise<number> {
  let written = 0;
  for (const result of results) {
    if (result.changes.length === 0) continue;
    await recordAudit(db, now, {
      orgId: result.orgId,
      actor: { kind: "cli", id: null },
      requestId: runId,
      resourceType: "organizations",
      resourceId: result.orgId,
      action: result.created ? "create" : "apply",
      operation: "pbxctl apply",
      before: before.get(result.orgId) ?? null,
      after: await orgSnapshot(db, result.orgId),
      schedulesDeploy: deploys,
    });
    written += 1;
  }
  return written;
}
