// Checks a request's credentials against a route's declared auth kinds and permission.
import type { Context } from "koa";
import { authenticate, type Credentials } from "../domain/access/authentication.js";
import type { Principal } from "../domain/access/principal.js";
import { Forbidden, Unauthorized } from "../domain/errors.js";
import { ADMIN_TOKEN_REFUSAL } from "./admin-scope.js";
import type { AppDeps } from "./deps.js";
import type { AuthKind, RouteDefinition } from "./registry.js";

function header(ctx: Context, name: string): string | undefined {
  const value = ctx.get(name);
  return value === "" ? undefined : value;
}

/** The credentials carried by a request (headers, and `org_id` for the internal key). */
export function credentialsOf(ctx: Context): Credentials {
  const credentials: Credentials = {};
  const apiKey = header(ctx, "x-api-key");
  if (apiKey !== undefined) credentials.apiKey = apiKey;
  const internalKey = header(ctx, "x-internal-key");
  if (internalKey !== undefined) credentials.internalKey = internalKey;
  const authorization = header(ctx, "authorization");
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    // Any other Authorization scheme is a malformed credential, not a missing one.
    if (!match?.[1]) throw new Unauthorized("Authentication failed");
    credentials.bearer = match[1];
  }
  const orgId = ctx.query.org_id;
  // Org ids are UUIDs, stored in lower case; a UUID's case carries no meaning.
  if (typeof orgId === "string" && orgId !== "") credentials.orgId = orgId.toLowerCase();
  return credentials;
}

function refusal(principal: Principal, accepted: readonly AuthKind[]): Forbidden {
  if (principal.kind === "admin") {
    return new Forbidden(ADMIN_TOKEN_REFUSAL);
  }
  if (accepted.includes("admin")) return new Forbidden("Admin access required");
  if (accepted.includes("org") && principal.kind === "pending-user") {
    return new Forbidden("Your account has no active organization");
  }
  if (accepted.includes("pending-user")) {
    return new Forbidden("Only a signed-in user without an organization may use this endpoint");
  }
  return new Forbidden("Internal key required");
}

/** The caller of `route`, or throws 401/403/400 with the spec's messages. Null on public routes. */
export async function authorizeRoute(
  route: RouteDefinition,
  ctx: Context,
  deps: AppDeps,
): Promise<Principal | null> {
  const accepted = route.authKinds;
  if (accepted.includes("public")) return null;
  const internalScope = accepted.includes("internal") ? "service" : "org";
  const principal = await authenticate(deps, credentialsOf(ctx), internalScope);
  if (!accepted.includes(principal.kind)) throw refusal(principal, accepted);
  if (principal.kind === "org" && route.permission && principal.permissions !== "all") {
    if (!principal.permissions.has(route.permission)) {
      throw new Forbidden(
        principal.via === "api_key"
          ? `API key lacks permission: ${route.permission}`
          : `Role '${principal.role}' lacks permission: ${route.permission}`,
      );
    }
  }
  return principal;
}
