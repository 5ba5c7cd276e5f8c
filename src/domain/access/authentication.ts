// Turns request credentials into a Principal, in the order of SPEC.md §5: `X-API-Key` starting
// `ak_`; any other `X-API-Key` (the `org_` key); `X-Internal-Key`; `Authorization: Bearer`.
// Also the credential exchanges of §4.1 (org login, admin login, internal org token).
import { createApiKeyRepository } from "../../store/api-key-repository.js";
import { createOrgUserRepository } from "../../store/org-user-repository.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { cachedRead } from "../../store/read-cache.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, NotFound, Unauthorized } from "../errors.js";
import { digest, safeEqual, verifySecret } from "../secrets.js";
import { isRole, permissionsOfRole } from "./permissions.js";
import type { OrgPrincipal, Principal } from "./principal.js";

export const NOT_ACTIVE = "Invalid authentication or organization not active";

export interface Credentials {
  apiKey?: string;
  bearer?: string;
  internalKey?: string;
  /** `org_id` query parameter, used with the internal key. */
  orgId?: string;
}

/** How the internal key is read for this route: as org scope (needs org_id) or as a service. */
export type InternalScope = "org" | "service";

// Every request looks its credential up; the lookups are reused while the store is unchanged
// (src/store/read-cache.ts), so a revoked key or a suspended org fails on the very next request.

/** Refuses an org that is unknown or not active; nothing of it is needed beyond that. */
async function activeOrg(deps: DomainDeps, orgId: string): Promise<void> {
  const org = await cachedRead(deps.db, `org:${orgId}`, () =>
    createOrganizationRepository(deps.db).findById(orgId),
  );
  if (org?.status !== "active") throw new Unauthorized(NOT_ACTIVE);
}

/** The principal the credentials prove; throws Unauthorized/BadRequest with §7 messages. */
export async function authenticate(
  deps: DomainDeps,
  credentials: Credentials,
  internalScope: InternalScope,
): Promise<Principal> {
  const { apiKey, bearer, internalKey } = credentials;
  if (apiKey?.startsWith("ak_")) {
    const keyDigest = digest(apiKey);
    const key = await cachedRead(deps.db, `api-key:${keyDigest}`, () =>
      createApiKeyRepository(deps.db).findByDigest(keyDigest),
    );
    if (!key || key.revoked_at !== null) throw new Unauthorized(NOT_ACTIVE);
    await activeOrg(deps, key.org_id);
    return {
      kind: "org",
      orgId: key.org_id,
      via: "api_key",
      apiKeyId: key.id,
      permissions: new Set(key.permissions),
    };
  }
  if (apiKey !== undefined) {
    const keyDigest = digest(apiKey);
    const org = await cachedRead(deps.db, `org-key:${keyDigest}`, () =>
      createOrganizationRepository(deps.db).findByKeyDigest(keyDigest),
    );
    if (org?.status !== "active") throw new Unauthorized(NOT_ACTIVE);
    return { kind: "org", orgId: org.id, via: "org_key", permissions: "all" };
  }
  if (internalKey !== undefined) {
    const expected = deps.config.internalKey;
    if (expected === null || !safeEqual(internalKey, expected)) {
      throw new Unauthorized("Invalid internal key");
    }
    if (internalScope === "service") return { kind: "internal" };
    if (!credentials.orgId) {
      throw new BadRequest("org_id query parameter is required with X-Internal-Key");
    }
    await activeOrg(deps, credentials.orgId);
    return { kind: "org", orgId: credentials.orgId, via: "internal", permissions: "all" };
  }
  if (bearer !== undefined) return principalOfToken(deps, bearer);
  throw new Unauthorized("Authentication required");
}

async function principalOfToken(deps: DomainDeps, token: string): Promise<Principal> {
  const claims = await deps.tokens.verify(token);
  switch (claims.typ) {
    case "admin":
      return { kind: "admin", username: claims.sub };
    case "pending":
      return { kind: "pending-user", subject: claims.sub, email: claims.email };
    case "org":
      await activeOrg(deps, claims.org_id);
      return { kind: "org", orgId: claims.org_id, via: "org_jwt", permissions: "all" };
    case "user": {
      await activeOrg(deps, claims.org_id);
      let role = claims.role;
      if (!claims.impersonated_by) {
        // Read the role now, not from the token: a demoted or removed user loses access at once.
        const member = await createOrgUserRepository(deps.db).findById(claims.org_id, claims.sub);
        if (member?.status !== "active" || !isRole(member.role)) {
          throw new Unauthorized(NOT_ACTIVE);
        }
        role = member.role;
      }
      const principal: OrgPrincipal = {
        kind: "org",
        orgId: claims.org_id,
        via: "user_jwt",
        role,
        userId: claims.sub,
        permissions: new Set(permissionsOfRole(role)),
      };
      return principal;
    }
  }
}

/** `POST /auth/login`: org key + org secret -> 24 h org JWT. */
export async function loginWithOrgKey(
  deps: DomainDeps,
  body: { api_key?: string; api_secret?: string },
): Promise<{ token: string; expires_in: number }> {
  const { api_key, api_secret } = body;
  if (!api_key || !api_secret) throw new BadRequest("API key and secret are required");
  // `ak_` keys are full credentials on their own and never exchange for a token (§5 rule 3).
  if (api_key.startsWith("ak_")) throw new Unauthorized("Invalid credentials");
  const org = await createOrganizationRepository(deps.db).findByKeyDigest(digest(api_key));
  if (!org || !verifySecret(api_secret, org.api_secret_hash)) {
    throw new Unauthorized("Invalid credentials");
  }
  if (org.status !== "active") throw new Unauthorized(NOT_ACTIVE);
  return { token: await deps.tokens.sign({ typ: "org", org_id: org.id }), expires_in: 86400 };
}

/** `POST /admin/auth`: admin username + password -> 24 h admin JWT. */
export async function loginAdmin(
  deps: DomainDeps,
  body: { admin_username?: string; admin_password?: string },
): Promise<{ token: string; expires_in: number }> {
  const { admin_username, admin_password } = body;
  if (!admin_username || !admin_password) {
    throw new BadRequest("admin_username and admin_password are required");
  }
  // Check the password even for a wrong username so both failures take the same time.
  const passwordOk = verifySecret(admin_password, deps.config.adminPasswordHash);
  if (!safeEqual(admin_username, deps.config.adminUsername) || !passwordOk) {
    throw new Unauthorized("Invalid credentials");
  }
  return {
    token: await deps.tokens.sign({ typ: "admin", sub: admin_username }),
    expires_in: 86400,
  };
}

/** `POST /auth/admin-token`: an org JWT for a named org, for services holding the internal key. */
export async function orgTokenForService(
  deps: DomainDeps,
  orgId: string,
): Promise<{ token: string; expires_in: number }> {
  const org = await createOrganizationRepository(deps.db).findById(orgId);
  if (!org) throw new NotFound("Organization not found");
  if (org.status !== "active") throw new Unauthorized(NOT_ACTIVE);
  return { token: await deps.tokens.sign({ typ: "org", org_id: org.id }), expires_in: 86400 };
}

/** `POST /admin/impersonate/{orgId}`: a 24 h owner-role user JWT for that org. */
export async function impersonate(
  deps: DomainDeps,
  orgId: string,
  by: string,
): Promise<{ token: string; expires_in: number; user: { role: "owner"; permissions: string[] } }> {
  const org = await createOrganizationRepository(deps.db).findById(orgId);
  if (!org) throw new NotFound("Organization not found");
  if (org.status !== "active") throw new Unauthorized(NOT_ACTIVE);
  const token = await deps.tokens.sign({
    typ: "user",
    org_id: org.id,
    sub: `impersonation:${by}`,
    role: "owner",
    impersonated_by: by,
  });
  return {
    token,
    expires_in: 86400,
    user: { role: "owner", permissions: permissionsOfRole("owner") },
  };
}
