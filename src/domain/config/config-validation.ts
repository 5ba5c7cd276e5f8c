// One rule set for YAML and the API: a save is checked by running the model's validateOrg on the
// org's configuration as it would be after the change. Only problems at the changed resource
// block the save, so an unrelated pre-existing problem (say, a DID routed to a queue that an older
// version allowed to be deleted) does not make every later edit fail.
import {
  COLLECTION_KINDS,
  type CollectionItem,
  type CollectionKind,
  collectionAt,
} from "../../model/collections.js";
import type { Diagnostic } from "../../model/diagnostic.js";
import type { OrgState } from "../../model/org-state.js";
import { validateOrg } from "../../model/validate.js";
import { BadRequest, Conflict } from "../errors.js";

/** The error-severity problems validateOrg finds under `resourcePath` (e.g. `ivrs[2]`). */
export function problemsAt(state: OrgState, resourcePath: string): Diagnostic[] {
  return errorsOf(state).filter((d) => isAt(d.path, resourcePath));
}

/**
 * Throws the first problem at `resourcePath` as the matching domain error (Conflict for a diagnostic
 * of kind `conflict`, the extension collisions; BadRequest otherwise), with validateOrg's message, which is SPEC.md §7's wording
 * where the specification has one.
 */
export function assertValidAt(state: OrgState, resourcePath: string): void {
  const [first] = problemsAt(state, resourcePath);
  if (!first) return;
  throw first.kind === "conflict" ? new Conflict(first.message) : new BadRequest(first.message);
}

// Problems are compared across a change by message and by path with the changed array's index
// replaced by the element's id, since deleting users[0] shifts every later index.
function problemKey(state: OrgState, d: Diagnostic): string {
  const at = collectionAt(d.path);
  const id = at && state[at.name][at.index]?.id;
  const path = at && id ? d.path.replace(/^[a-z_]+\[\d+\]/, `${at.name}#${id}`) : d.path;
  return `${path}\u0000${d.message}`;
}

function errorsOf(state: OrgState): Diagnostic[] {
  return validateOrg(state).filter((d) => d.severity === "error");
}

/** Whether `path` is `resourcePath` or inside it. */
function isAt(path: string, resourcePath: string): boolean {
  return (
    path === resourcePath ||
    path.startsWith(`${resourcePath}.`) ||
    path.startsWith(`${resourcePath}[`)
  );
}

/** `IVR 'Main'`, `queue 'Sales'`, `DID +9180...`: who a diagnostic path is about. */
function describeOwner(state: OrgState, path: string): string {
  const at = collectionAt(path);
  const item = at && state[at.name][at.index];
  if (!at || !item) return path;
  const rules: CollectionKind<CollectionItem> = COLLECTION_KINDS[at.name];
  return rules.owner(item);
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
    (d) => !known.has(problemKey(after, d)) && (ownPath === null || !isAt(d.path, ownPath)),
  );
  const [first] = fresh;
  if (first) {
    throw new BadRequest(
      `${action}: it is still used by ${describeOwner(after, first.path)} (${first.message})`,
    );
  }
}
