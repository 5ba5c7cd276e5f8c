// Where an admin JWT is accepted: the admin endpoints SPEC.md names, and nowhere else. A route
// declared with `auth: "admin"` outside this scope is refused when it is defined, so the rule in
// docs/api.md and what the server accepts cannot drift apart.

/** The admin endpoints, in the words docs/api.md and the 403 use. */
export const ADMIN_SCOPE_TEXT = "/admin/*, GET and POST /organizations, /did-pool/admin/*";

/** Whether an admin JWT may be accepted by `method path` (an OpenAPI-style path). */
export function inAdminScope(method: string, path: string): boolean {
  if (path.startsWith("/admin/")) return true;
  if (path === "/did-pool/admin" || path.startsWith("/did-pool/admin/")) return true;
  return path === "/organizations" && (method === "get" || method === "post");
}

/** The 403 for an admin JWT on any other endpoint. */
export const ADMIN_TOKEN_REFUSAL = `Admin tokens are only valid for admin endpoints (${ADMIN_SCOPE_TEXT})`;
