// Tenant ownership of a row found by id, the one check every org resource makes (SPEC.md §5
// rule 8): a row of another org is 403 `Access denied` and no row is 404 with the resource's own
// message; neither answer reveals anything of the row.
import { Forbidden, NotFound } from "./errors.js";

/** SPEC.md §7: the message for another org's resource. */
export const ACCESS_DENIED = "Access denied";

/**
 * The row when it belongs to `orgId`. `row` is what the repository's `findById` (or
 * `findRowById`) returned; `org_id` is null for a row no org owns (a DID in the pool), which is
 * another org's as far as the caller is concerned.
 */
export function ownRow<T extends { org_id: string | null }>(
  row: T | undefined,
  orgId: string,
  notFound: string,
): T {
  if (!row) throw new NotFound(notFound);
  if (row.org_id !== orgId) throw new Forbidden(ACCESS_DENIED);
  return row;
}
