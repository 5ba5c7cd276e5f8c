// One rule set for YAML and the API: a save is checked by running the model's validateOrg on the
// org's configuration as it would be after the change. Only problems at the changed resource
// block the save, so an unrelated pre-existing problem (say, a DID routed to a queue that an older
// version allowed to be deleted) does not make every later edit fail.
import type { Diagnostic } from "../model/diagnostic.js";
import type { OrgState } from "../model/org-state.js";
import { validateOrg } from "../model/validate.js";
import { BadRequest, Conflict } from "./errors.js";

/** SPEC.md §7 collision messages are 409s, everything else validateOrg reports is a 400. */
const COLLISION = /^Extension \S+ is already (used by|assigned to) /;

/** The error-severity problems validateOrg finds under `resourcePath` (e.g. `ivrs[2]`). */
export function problemsAt(state: OrgState, resourcePath: string): Diagnostic[] {
  return validateOrg(state).filter(
    (d) =>
      d.severity === "error" &&
      (d.path === resourcePath ||
        d.path.startsWith(`${resourcePath}.`) ||
        d.path.startsWith(`${resourcePath}[`)),
  );
}

/**
 * Throws the first problem at `resourcePath` as the matching domain error (Conflict for extension
 * collisions, BadRequest otherwise), with validateOrg's message, which is SPEC.md §7's wording
 * where the specification has one.
 */
export function assertValidAt(state: OrgState, resourcePath: string): void {
  const [first] = problemsAt(state, resourcePath);
  if (!first) return;
  throw COLLISION.test(first.message) ? new Conflict(first.message) : new BadRequest(first.message);
}
