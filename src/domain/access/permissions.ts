// Permissions: the 14 an `ak_` key may hold (SPEC.md §2), plus `tickets.*` for the auto-tickets
// of §4.7 (docs/tickets.md), and the role-only ones that guard org
// administration. Routes name the permission they need; the API's auth layer enforces it for
// `ak_` keys and for user JWT roles. Org keys, org JWTs and the internal key have full org scope.
// Both lists of permissions are in src/model/access-views.ts, beside the views that show them.
import {
  ALL_PERMISSIONS,
  API_KEY_PERMISSIONS,
  type ApiKeyPermission,
  type Permission,
  ROLE_ONLY_PERMISSIONS,
} from "../../model/access-views.js";
import { MEMBER_ROLES } from "../../model/org-extras.js";

export { API_KEY_PERMISSIONS, type ApiKeyPermission, type Permission, ROLE_ONLY_PERMISSIONS };

export const ROLES = MEMBER_ROLES;
export type Role = (typeof ROLES)[number];

const CALLS_AND_CRM = API_KEY_PERMISSIONS;

/** What each platform-user role may do (SPEC.md §5 rule 9: deploy = admin/owner, set-default = owner/manager). */
export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: ALL_PERMISSIONS,
  admin: ALL_PERMISSIONS.filter((p) => p !== "dids.set_default"),
  manager: [...CALLS_AND_CRM, "org_users.read", "dids.set_default"],
  agent: [
    "calls.read",
    "calls.click_to_call",
    "calls.recording",
    "calls.live",
    "calls.transfer",
    "calls.hangup",
    "calls.hold",
    "crm.read",
    "crm.write",
    "tickets.read",
    "tickets.write",
  ],
  viewer: ["calls.read", "crm.read", "tickets.read"],
};

/** The permissions of a role, in a stable order. */
export function permissionsOfRole(role: Role): Permission[] {
  return [...ROLE_PERMISSIONS[role]];
}

/** True for a value that names a role. */
export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
