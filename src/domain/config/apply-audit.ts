// The audit records of `pbxctl apply` (issue 16): one per org the run changed, by actor `cli`,
// with the org's exported state (secrets as references, then redacted) before and after, written
// by applyOrgState in the org's own transaction.
import { randomUUID } from "node:crypto";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { recordAudit } from "../compliance/audit-log.js";
import type { OrgApplyResult } from "./apply.js";
import { exportState } from "./export.js";

/** The org as `pbxctl export` would write it, or null when the store has no such org. */
export async function orgSnapshot(db: Db, orgId: string): Promise<unknown> {
  const exists = await createOrganizationRepository(db).findHandle(orgId);
  return exists ? exportState(await loadOrgState(db, orgId)).data : null;
}

/** The run an apply's records belong to: one id for every org it changed. */
export interface ApplyAuditRun {
  runId: string;
  now: Date;
  /** The run deploys the orgs it applied. */
  deploys: boolean;
}

/** A new run of `pbxctl apply`. */
export function applyAuditRun(now: Date, deploys: boolean): ApplyAuditRun {
  return { runId: randomUUID(), now, deploys };
}

/**
 * Appends the record of one applied org, in the apply's own transaction (`db`), so the change
 * and its record commit together (issue 28 item 5). An unchanged org writes none.
 */
export async function recordApplied(
  db: Db,
  run: ApplyAuditRun,
  result: OrgApplyResult,
  before: unknown,
): Promise<void> {
  if (result.changes.length === 0) return;
  await recordAudit(db, run.now, {
    orgId: result.orgId,
    actor: { kind: "cli", id: null },
    requestId: run.runId,
    resourceType: "organizations",
    resourceId: result.orgId,
    action: result.created ? "create" : "apply",
    operation: "pbxctl apply",
    before,
    after: await orgSnapshot(db, result.orgId),
    schedulesDeploy: run.deploys,
  });
}
