// Rules that users and queues share: one extension space per org (SPEC.md §7's 409 messages),
// tenant checks by id (403 for another org's row, 404 for none), refusing a change that would
// break another resource of the org, and the deploy notification after a commit.
import type { Diagnostic } from "../model/diagnostic.js";
import type { OrgState } from "../model/org-state.js";
import { validateOrg } from "../model/validate.js";
import type { Db } from "../store/database.js";
import {
  createExtensionClaimRepository,
  type ExtensionOwner,
  type ExtensionOwnerType,
} from "../store/extension-claim-repository.js";
import type { DomainDeps } from "./deps.js";
import { BadRequest, Conflict, Forbidden, NotFound } from "./errors.js";

/** SPEC.md §7: what a 409 says about the holder of an extension. */
export function collisionMessage(
  extension: string,
  holder: { type: ExtensionOwnerType; name: string },
): string {
  switch (holder.type) {
    case "ivr":
      return `Extension ${extension} is already used by IVR '${holder.name}'`;
    case "queue":
      return `Extension ${extension} is already used by queue '${holder.name}'`;
    case "user":
      return `Extension ${extension} is already assigned to user '${holder.name}'`;
  }
}

/** Who in `state` holds `extension`, other than `self`; undefined when it is free. */
export function holderInState(
  state: OrgState,
  extension: string,
  self?: ExtensionOwner,
): { type: ExtensionOwnerType; name: string } | undefined {
  const isSelf = (type: ExtensionOwnerType, id: string | undefined) =>
    self !== undefined && self.type === type && self.id === id;
  const user = state.users.find((u) => u.extension === extension && !isSelf("user", u.id));
  if (user) return { type: "user", name: user.name };
  const queue = state.queues.find((q) => q.number === extension && !isSelf("queue", q.id));
  if (queue) return { type: "queue", name: queue.name };
  const ivr = state.ivrs.find((i) => i.extension === extension && !isSelf("ivr", i.id));
  if (ivr) return { type: "ivr", name: ivr.name };
  return undefined;
}

/**
 * Claims `extension` for `owner` in the caller's transaction; throws Conflict with the SPEC.md §7
 * message when someone else holds it. The claim table's primary key is the final word when two
 * requests race.
 */
export async function claimExtension(
  trx: Db,
  orgId: string,
  extension: string,
  owner: ExtensionOwner,
): Promise<void> {
  const result = await createExtensionClaimRepository(trx).claim(orgId, extension, owner);
  if (!result.claimed) throw new Conflict(collisionMessage(extension, result.holder));
}

/** Releases `extension` held by `owner` (in the caller's transaction). */
export async function releaseExtension(
  trx: Db,
  orgId: string,
  extension: string,
  owner: ExtensionOwner,
): Promise<void> {
  await createExtensionClaimRepository(trx).release(orgId, extension, owner);
}

/**
 * The row when it belongs to `orgId`. A row of another org is 403 `Access denied` (SPEC.md §5
 * rule 8) and no row is 404 `<notFound>`; neither reveals anything of the row.
 */
export function ownRow<T extends { org_id: string }>(
  row: T | undefined,
  orgId: string,
  notFound: string,
): T {
  if (!row) throw new NotFound(notFound);
  if (row.org_id !== orgId) throw new Forbidden("Access denied");
  return row;
}

// Problems are compared across a change by message and by path with the changed array's index
// replaced by the element's id, since deleting users[0] shifts every later index.
function problemKey(state: OrgState, d: Diagnostic): string {
  const path = d.path.replace(/^(users|queues|ivrs|dids)\[(\d+)\]/, (whole, list, index) => {
    const item = (state[list as "users"] as Array<{ id?: string }>)[Number(index)];
    return item?.id ? `${list}#${item.id}` : whole;
  });
  return `${path}\u0000${d.message}`;
}

function errorsOf(state: OrgState): Diagnostic[] {
  return validateOrg(state).filter((d) => d.severity === "error");
}

/** `IVR 'Main'`, `queue 'Sales'`, `DID +9180...`: who a diagnostic path is about. */
function describeOwner(state: OrgState, path: string): string {
  const match = /^(users|queues|ivrs|dids|trunks|outbound_routes)\[(\d+)\]/.exec(path);
  if (!match) return path;
  const index = Number(match[2]);
  switch (match[1]) {
    case "users":
      return `user '${state.users[index]?.name}'`;
    case "queues":
      return `queue '${state.queues[index]?.name}'`;
    case "ivrs":
      return `IVR '${state.ivrs[index]?.name}'`;
    case "dids":
      return `DID ${state.dids[index]?.number}`;
    default:
      return path;
  }
}

/**
 * Throws 400 when `after` has an error outside `ownPath` that `before` did not have: the change
 * would break another resource (an IVR option, a DID routing or a queue timeout that names it).
 * Problems that already existed do not block the change. `action` opens the message, e.g.
 * `Cannot delete user 'Bob'`; the rest names the user of it and what would break:
 * `Cannot delete user 'Bob': it is still used by IVR 'Main' (no user with extension 2001)`.
 */
export function assertBreaksNothingElse(
  before: OrgState,
  after: OrgState,
  ownPath: string | null,
  action: string,
): void {
  const known = new Set(errorsOf(before).map((d) => problemKey(before, d)));
  const fresh = errorsOf(after).filter(
    (d) =>
      !known.has(problemKey(after, d)) &&
      (ownPath === null ||
        !(
          d.path === ownPath ||
          d.path.startsWith(`${ownPath}.`) ||
          d.path.startsWith(`${ownPath}[`)
        )),
  );
  const [first] = fresh;
  if (first) {
    throw new BadRequest(
      `${action}: it is still used by ${describeOwner(after, first.path)} (${first.message})`,
    );
  }
}

/**
 * Tells the deploy scheduler that the org's configuration changed. Called after the commit; the
 * response never waits for the deploy and never fails because of it (SPEC.md §8), so a throwing
 * scheduler is ignored here (the scheduler logs its own failures).
 */
export function notifyConfigChanged(deps: DomainDeps, orgId: string): void {
  try {
    deps.deployScheduler.scheduleDeploy(orgId);
  } catch {
    // See above: the save has succeeded; the next save or a manual deploy catches up.
  }
}
