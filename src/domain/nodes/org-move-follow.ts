// Following a move until it is done (`pbxctl org move` without --no-wait). A move is carried out
// only by the holder of the `org-moves` lease, a `pbxctl serve` with engine nodes
// (org-move-driver.ts); with none running, the move stays recorded and nothing happens, so a
// follower that only polled the move would wait forever. It also reads the lease: once no replica
// has held it for a lease's lifetime and a renewal (the time another replica takes to take a
// dead holder's role), counted from the later of the lease's expiry and the start of the wait,
// it stops and says why. The move itself is left recorded: the next driver carries it out.
import type { Clock, Timers } from "../../clock.js";
import { LEASE_RENEW_MS, LEASE_TTL_MS } from "../../replica/roles.js";
import type { Db } from "../../store/database.js";
import { createLeaseRepository } from "../../store/lease-repository.js";
import { Unavailable } from "../errors.js";
import { ORG_MOVES_ROLE } from "./org-move-driver.js";
import { getOrgMove, type OrgMoveView } from "./org-moves.js";

/** How long without a driver before a follower gives up: a takeover's time. */
export const NO_DRIVER_AFTER_MS = LEASE_TTL_MS + LEASE_RENEW_MS;

/** How often a follower looks at the move (and the lease) again. */
export const FOLLOW_POLL_MS = 500;

/** No replica drives org moves: the move is recorded but nothing carries it out now. */
export class NoMoveDriver extends Unavailable {}

export interface FollowDeps {
  db: Db;
  /** Wall time, compared with the lease's expiry (written by the replicas' clocks). */
  clock: Clock;
}

export interface FollowOptions {
  /** The waits between looks, and the time since the wait started. */
  timers: Timers;
  pollMs?: number;
  /** Called with the move at every look (the first included). */
  onLook(move: OrgMoveView): void;
}

/**
 * Looks at the org's latest move until it is finished, and answers it; NoMoveDriver (503) when no
 * replica has held the `org-moves` lease for NO_DRIVER_AFTER_MS during the wait.
 */
export async function followOrgMove(
  deps: FollowDeps,
  orgId: string,
  options: FollowOptions,
): Promise<OrgMoveView> {
  const { timers } = options;
  const started = timers.now();
  let move = await getOrgMove(deps, orgId);
  options.onLook(move);
  while (move.finished_at === null) {
    const missing = await missingDriver(deps, timers.now() - started);
    if (missing) throw new NoMoveDriver(`${missing}; ${leftRecorded(move)}`);
    await new Promise<void>((resolve) =>
      timers.setTimer(options.pollMs ?? FOLLOW_POLL_MS, resolve),
    );
    move = await getOrgMove(deps, orgId);
    options.onLook(move);
  }
  return move;
}

/** Why no replica drives moves now (none for long enough), or null when one does or may. */
async function missingDriver(deps: FollowDeps, waitedMs: number): Promise<string | null> {
  const lease = await createLeaseRepository(deps.db).find(ORG_MOVES_ROLE);
  const now = deps.clock().getTime();
  const expiry = lease ? Date.parse(lease.expires_at) : Number.NEGATIVE_INFINITY;
  if (Math.min(now - expiry, waitedMs) < NO_DRIVER_AFTER_MS) return null;
  const seconds = Math.round(NO_DRIVER_AFTER_MS / 1000);
  // A clean stop gives the lease up (its expiry set to 1970): said as such, not as a date.
  const last = !lease
    ? "no replica ever held it"
    : expiry > 0
      ? `its last holder, ${lease.holder}, stopped renewing it at ${lease.expires_at}`
      : `its last holder, ${lease.holder}, gave it up when it stopped`;
  return `No pbxctl serve is carrying out org moves: nobody has held the ${ORG_MOVES_ROLE} lease for ${seconds} s (${last})`;
}

function leftRecorded(move: OrgMoveView): string {
  return `the move to ${move.to_node} stays recorded (${move.phase}) and goes on once a pbxctl serve with engine nodes runs`;
}
