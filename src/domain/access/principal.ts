// Who is calling, once a credential has been checked. Route handlers receive one of these.
import type { Permission, Role } from "./permissions.js";

/** How an org-scoped caller proved itself. */
export type OrgCredentialKind = "api_key" | "org_key" | "org_jwt" | "user_jwt" | "internal";

export interface OrgPrincipal {
  kind: "org";
  orgId: string;
  via: OrgCredentialKind;
  /** `all` for org-wide credentials; the key's or the role's list otherwise. */
  permissions: "all" | ReadonlySet<Permission>;
  role?: Role;
  /** Platform user id for user JWTs. */
  userId?: string;
  apiKeyId?: string;
}

export interface AdminPrincipal {
  kind: "admin";
  username: string;
}

/** A service holding the internal key, not bound to one org. */
export interface InternalPrincipal {
  kind: "internal";
}

/** A person signed in with the identity provider who has no active org yet. */
export interface PendingUserPrincipal {
  kind: "pending-user";
  subject: string;
  email: string | null;
}

export type Principal = OrgPrincipal | AdminPrincipal | InternalPrincipal | PendingUserPrincipal;
