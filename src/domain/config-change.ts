// "The org's configuration changed": every save of something the compiler reads (users, queues,
// IVRs, DIDs, trunks, outbound routes, settings, music on hold) commits first and then tells the
// deploy scheduler (SPEC.md §8). The answer never waits for the deploy and never fails because
// of it.
import type { Db } from "../store/database.js";
import { lockOrgForWrite } from "../store/org-write-lock.js";
import type { DomainDeps } from "./deps.js";

/**
 * Tells the deploy scheduler that the org's configuration changed. Called after the commit; a
 * throwing scheduler is ignored here (the scheduler logs its own failures), since the save has
 * succeeded and the next save or a manual deploy catches up.
 */
export function notifyConfigChanged(
  deps: Pick<DomainDeps, "deployScheduler">,
  orgId: string,
): void {
  try {
    deps.deployScheduler.scheduleDeploy(orgId);
  } catch {
    // See above.
  }
}

/**
 * Runs `write` in one transaction and, once it has committed, schedules the org's deploy. The
 * write's result is returned; a write that throws rolls back and schedules nothing. Saves of one
 * org run one at a time (`lockOrgForWrite`), whichever store and however many replicas.
 */
export async function changeOrgConfig<T>(
  deps: Pick<DomainDeps, "db" | "deployScheduler">,
  orgId: string,
  write: (trx: Db) => Promise<T>,
): Promise<T> {
  const result = await deps.db.transaction().execute(async (trx) => {
    await lockOrgForWrite(trx, orgId);
    return write(trx);
  });
  notifyConfigChanged(deps, orgId);
  return result;
}
