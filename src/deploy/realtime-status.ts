// What realtime PJSIP still owes one org (PBX_PJSIP=realtime), for `GET /config/status`: the
// org's users and trunks are live only once their `ps_*` rows are what its configuration compiles
// to AND every engine holding the org has taken the changes (`pjsip_realtime_pending`); the files'
// revisions say nothing of either. Read from the store alone, never from a deployer's memory:
// the status is answered by any replica (src/deploy/deploy-jobs.ts), and the rows and the queue
// are the truth every replica shares.
import type { RealtimeRows } from "./realtime-pjsip.js";
import { CompileRefusedError, type StoreBuilds } from "./store-builds.js";

/** What realtime PJSIP owes an org; all zero when its PJSIP is live. */
export interface RealtimeOrgPending {
  /**
   * The org's rows the database does not hold as its configuration compiles to now (added,
   * changed or removed): a save's write still running, or waiting for its retry after a failure.
   */
  unwritten: number;
  /**
   * The org's changed objects (endpoint, auth, AOR, registration) that an engine holding it
   * has not taken yet: each counted once however many engines owe it. Never per engine node:
   * an org is never told where it runs (docs/nodes.md); `pbxctl status` names the nodes.
   */
  notTaken: number;
}

export interface RealtimeStatusSources {
  builds: Pick<StoreBuilds, "orgPjsipRows">;
  rows: Pick<RealtimeRows, "unwrittenRows" | "pending">;
}

/** What realtime PJSIP owes the org now: its unwritten rows, and its objects not taken. */
export async function realtimeOrgPending(
  sources: RealtimeStatusSources,
  orgId: string,
): Promise<RealtimeOrgPending> {
  const [unwritten, owed] = await Promise.all([
    unwrittenRowCount(sources, orgId),
    // Only this org's queue: another org's debt never makes this one not live.
    sources.rows.pending({ orgId }),
  ]);
  const objects = new Set(owed.map((object) => `${object.kind} ${object.id}`));
  return { unwritten, notTaken: objects.size };
}

async function unwrittenRowCount(sources: RealtimeStatusSources, orgId: string): Promise<number> {
  let built: Awaited<ReturnType<StoreBuilds["orgPjsipRows"]>>;
  try {
    built = await sources.builds.orgPjsipRows(orgId);
  } catch (error) {
    // PJSIP the compiler refuses leaves the rows as they are, on purpose: nothing is owed to
    // them, and the status's `compile_error` already says why the org is not live.
    if (error instanceof CompileRefusedError) return 0;
    throw error;
  }
  if (built === null) return 0;
  return (await sources.rows.unwrittenRows(built)).length;
}
