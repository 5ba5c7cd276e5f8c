// Narrowing helpers for handlers: the route's auth kinds already guarantee the kind, these make
// it a type (and fail loudly if a route's declaration and its handler disagree).
import type { OrgPrincipal, PendingUserPrincipal, Principal } from "../domain/access/principal.js";

function wrongKind(expected: string, principal: Principal | null): Error {
  return new Error(
    `route handler expected a ${expected} principal, got ${principal?.kind ?? "none"}`,
  );
}

/** The org caller of an `org` route. */
export function orgCaller(principal: Principal | null): OrgPrincipal {
  if (principal?.kind !== "org") throw wrongKind("org", principal);
  return principal;
}

/** The signed-in person of a `pending-user` route. */
export function pendingCaller(principal: Principal | null): PendingUserPrincipal {
  if (principal?.kind !== "pending-user") throw wrongKind("pending-user", principal);
  return principal;
}

/** Who to name in audit fields: the admin's username or `internal`. */
export function actorName(principal: Principal | null): string {
  return principal?.kind === "admin" ? principal.username : "internal";
}
