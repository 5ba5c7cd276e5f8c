// What the API answers about who may do what: the permissions (the 16 an `ak_` API key may hold
// and the role-only ones; the domain's permission rules and the API's request schemas take them
// from here), and the response schemas of an API key (`/api-keys`) and of a platform user
// (`/org-users`), with (as `Static<>`) the view types their use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { MEMBER_ROLES } from "./org-extras.js";
import { DateTime, Nullable, UuidString } from "./view-shapes.js";

export const API_KEY_PERMISSIONS = [
  "calls.read",
  "calls.write",
  "calls.click_to_call",
  "calls.originate_ai",
  "calls.recording",
  "calls.live",
  "calls.transfer",
  "calls.hangup",
  "calls.hold",
  "crm.read",
  "crm.write",
  "crm.delete",
  "crm.assign",
  "crm.customize",
  "tickets.read",
  "tickets.write",
] as const;

export type ApiKeyPermission = (typeof API_KEY_PERMISSIONS)[number];

export const ApiKeyPermissionSchema = Type.Union(API_KEY_PERMISSIONS.map((p) => Type.Literal(p)));

/** Permissions no `ak_` key can hold: only org-wide credentials and roles carry them. */
export const ROLE_ONLY_PERMISSIONS = [
  "org.manage",
  "api_keys.manage",
  "org_users.read",
  "org_users.manage",
  "config.deploy",
  "dids.set_default",
  // Compliance (audit log, retention, consent): owner and admin roles, org-wide credentials.
  "compliance.read",
  "compliance.write",
] as const;

export type Permission = ApiKeyPermission | (typeof ROLE_ONLY_PERMISSIONS)[number];

/** Every permission: the key permissions, then the role-only ones. */
export const ALL_PERMISSIONS: readonly Permission[] = [
  ...API_KEY_PERMISSIONS,
  ...ROLE_ONLY_PERMISSIONS,
];

/** Any permission, as a role's (or a signed-in user's) permission list names it. */
export const PermissionSchema = Type.Union(ALL_PERMISSIONS.map((p) => Type.Literal(p)));

/** A platform user's role (`src/domain/access/permissions.ts` gives each its permissions). */
export const RoleSchema = Type.Union(MEMBER_ROLES.map((r) => Type.Literal(r)));

/** A key as the API shows it: never the key or its secret after the creation answer. */
export const ApiKeyViewSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    key_prefix: Type.String({ description: "first characters of the key, to recognise it" }),
    permissions: Type.Array(ApiKeyPermissionSchema),
    revoked: Type.Boolean(),
    revoked_at: Nullable(DateTime),
    created_at: DateTime,
  },
  { title: "ApiKey" },
);
export type ApiKeyView = Static<typeof ApiKeyViewSchema>;

/**
 * A key as the store keeps it: the view's fields (without `revoked`, which `revoked_at` says),
 * its org, and the SHA-256 digest of the key and the scrypt hash of the secret that check a
 * presented credential.
 */
export type ApiKey = Omit<ApiKeyView, "revoked"> & {
  org_id: string;
  key_digest: string;
  secret_hash: string;
};

/** A person of the org (a platform user) as the API shows it, with the permissions of their role. */
export const OrgUserViewSchema = Type.Object(
  {
    id: UuidString,
    email: Type.String(),
    name: Nullable(Type.String()),
    role: RoleSchema,
    status: Type.String(),
    permissions: Type.Array(PermissionSchema),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "OrgUser" },
);
export type OrgUserView = Static<typeof OrgUserViewSchema>;
