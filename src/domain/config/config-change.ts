// "The org's configuration changed": every save of something the compiler reads (users, queues,
// IVRs, DIDs, trunks, outbound routes, settings, music on hold) records the org's deploy in its
// own transaction and, once committed, tells the deploy scheduler (SPEC.md §8). The answer never
// waits for the deploy and never fails because of the deploy itself.
import type { Db } from "../../store/database.js";
import { lockOrgForWrite } from "../../store/org-write-lock.js";
import type { DomainDeps } from "../deps.js";

/**
 * Tells the deploy scheduler that the org's configuration changed, after a write made through
 * `deps.db`: the deploy is recorded through that same handle (inside an API request, its unit of
 * work, so it commits with the write), then the deploy is scheduled. Recording is part of the
 * save: if it fails, so does the save (rolled back inside a unit of work), since an accepted
 * write must never be left undeployed. A throwing `scheduleDeploy` is ignored (the scheduler
 * logs its own failures; the recorded request is deployed anyway).
 */
export async function notifyConfigChanged(
  deps: Pick<DomainDeps, "db" | "deployScheduler">,
  orgId: string,
): Promise<void> {
  await deps.deployScheduler.recordDeploy(deps.db, orgId);
  scheduleRecordedDeploy(deps, orgId);
}

function scheduleRecordedDeploy(deps: Pick<DomainDeps, "deployScheduler">, orgId: string): void {
  try {
    deps.deployScheduler.scheduleDeploy(orgId);
  } catch {
    // See notifyConfigChanged.
  }
}

/**
 * Runs `write` in one transaction, records the org's deploy in it, and once it has committed,
 * schedules the deploy. The write's result is returned; a write that throws rolls back and
 * schedules nothing. Saves of one org run one at a time (`lockOrgForWrite`), whichever store and
 * however many replicas.
 */
export async function changeOrgConfig<T>(
  deps: Pick<DomainDeps, "db" | "deployScheduler">,
  orgId: string,
  write: (trx: Db) => Promise<T>,
): Promise<T> {
  const result = await deps.db.transaction().execute(async (trx) => {
    await lockOrgForWrite(trx, orgId);
    const written = await write(trx);
    await deps.deployScheduler.recordDeploy(trx, orgId);
    return written;
  });
  scheduleRecordedDeploy(deps, orgId);
  return result;
}
