// Authentication endpoints (SPEC.md §4.1).
import { Type } from "@sinclair/typebox";
import {
  impersonate,
  loginAdmin,
  loginWithOrgKey,
  orgTokenForService,
} from "../../domain/access/authentication.js";
import {
  adminAttempt,
  identityTokenAttempt,
  LOGIN_THROTTLE,
  orgKeyAttempt,
  withLoginThrottle,
} from "../../domain/access/login-throttle.js";
import { userLogin } from "../../domain/access/user-login.js";
import {
  adminRegenerateSecret,
  readCredentials,
  regenerateOwnSecret,
} from "../../domain/orgs/organizations.js";
import { PermissionSchema, RoleSchema } from "../../model/access-views.js";
import { actorName, orgCaller } from "../principals.js";
import { defineRoute } from "../registry.js";
import { IdParams, Nullable, TokenResponse, UuidString } from "../schemas.js";

/** The 429 of a throttled login (docs/api.md, "Failed logins"). */
const THROTTLED = {
  description: `Too many failed logins from this address (for this account: ${LOGIN_THROTTLE.pairFailures}; for any account: ${LOGIN_THROTTLE.sourceFailures}); locked for 1 s, doubling per further failure, at most ${LOGIN_THROTTLE.maxLockMs / 60_000} minutes`,
  headers: {
    "Retry-After": {
      description: "Seconds until this address may try again",
      schema: { type: "integer" as const, minimum: 1 },
    },
  },
};

const Credentials = Type.Object({
  api_key: Type.String({ description: "org key (`org_...`)" }),
  api_secret: Type.String({ description: "shown once; store it safely" }),
});

const UserInfo = Type.Object({
  id: Nullable(Type.String()),
  email: Nullable(Type.String()),
  org_id: Nullable(UuidString),
  role: Nullable(RoleSchema),
  permissions: Type.Array(PermissionSchema),
  status: Type.Union([
    Type.Literal("active"),
    Type.Literal("no_organization"),
    Type.Literal("awaiting_approval"),
  ]),
});

export const authRoutes = [
  defineRoute({
    method: "post",
    path: "/auth/login",
    tag: "Authentication",
    summary: "Exchange the org key and secret for a 24 h JWT",
    description: "Only the org key (`org_...`) is accepted; `ak_` keys are refused.",
    auth: "public",
    body: Type.Object({
      api_key: Type.String({ minLength: 1 }),
      api_secret: Type.String({ minLength: 1 }),
    }),
    bodyError: "API key and secret are required",
    responses: {
      200: { description: "Org JWT", schema: TokenResponse },
      401: { description: "Invalid credentials (wrong secret, or an ak_ key)" },
      429: THROTTLED,
    },
    handler: ({ deps, body, ctx }) =>
      withLoginThrottle(deps, orgKeyAttempt(body.api_key, ctx.ip), () =>
        loginWithOrgKey(deps, body),
      ),
  }),

  defineRoute({
    method: "post",
    path: "/auth/user-login",
    tag: "Authentication",
    summary: "Sign in with an identity-provider ID token",
    description:
      "Verifies the OIDC ID token against the configured JWKS, issuer and audience. A member of an active org gets a user JWT with the role's permissions; anyone else gets a token that can only request an organization and read that request.",
    auth: "public",
    body: Type.Object({ idp_token: Type.String({ minLength: 1 }) }),
    bodyError: "idp_token is required",
    responses: {
      200: {
        description: "Service token and the user's role",
        schema: Type.Object({ token: Type.String(), expires_in: Type.Integer(), user: UserInfo }),
      },
      503: { description: "User login is not configured" },
      401: { description: "Authentication failed (the identity token does not verify)" },
      429: THROTTLED,
    },
    handler: ({ deps, body, ctx }) =>
      withLoginThrottle(deps, identityTokenAttempt(body.idp_token, ctx.ip), () =>
        userLogin(deps, deps.identityVerifier, body),
      ),
  }),

  defineRoute({
    method: "post",
    path: "/admin/auth",
    tag: "Authentication",
    summary:
      "Admin login: a 24 h admin JWT, valid only on the admin endpoints (/admin/*, GET and POST /organizations, /did-pool/admin/*)",
    auth: "public",
    body: Type.Object({
      admin_username: Type.String({ minLength: 1 }),
      admin_password: Type.String({ minLength: 1 }),
    }),
    bodyError: "admin_username and admin_password are required",
    responses: {
      200: { description: "Admin JWT", schema: TokenResponse },
      401: { description: "Invalid credentials" },
      429: THROTTLED,
    },
    handler: ({ deps, body, ctx }) =>
      withLoginThrottle(deps, adminAttempt(body.admin_username, ctx.ip), () =>
        loginAdmin(deps, body),
      ),
  }),

  defineRoute({
    method: "post",
    path: "/auth/admin-token",
    tag: "Authentication",
    summary: "Org JWT for a named org, without the org secret (internal key)",
    auth: "internal",
    body: Type.Object({ org_id: UuidString }),
    responses: {
      200: { description: "Org JWT", schema: TokenResponse },
      404: { description: "No such organization" },
    },
    handler: ({ deps, body }) => orgTokenForService(deps, body.org_id),
  }),

  defineRoute({
    method: "post",
    path: "/admin/impersonate/{orgId}",
    tag: "Authentication",
    summary: "A 24 h owner-role user JWT for an org (admin or internal key)",
    auth: ["admin", "internal"],
    params: Type.Object({ orgId: UuidString }),
    responses: {
      200: {
        description: "User JWT",
        schema: Type.Object({
          token: Type.String(),
          expires_in: Type.Integer(),
          user: Type.Object({
            role: Type.Literal("owner"),
            permissions: Type.Array(PermissionSchema),
          }),
        }),
      },
    },
    handler: ({ deps, params, principal }) => impersonate(deps, params.orgId, actorName(principal)),
  }),

  defineRoute({
    method: "post",
    path: "/organizations/{id}/regenerate-secret",
    tag: "Authentication",
    summary: "New org secret for the caller's own org (shown once)",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: { 200: { description: "Org key and the new secret", schema: Credentials } },
    handler: ({ deps, params, principal }) =>
      regenerateOwnSecret(deps, orgCaller(principal), params.id),
  }),

  defineRoute({
    method: "post",
    path: "/admin/organizations/{id}/regenerate-secret",
    tag: "Authentication",
    summary: "New org secret for any org (for locked-out orgs)",
    auth: "admin",
    params: IdParams,
    responses: { 200: { description: "Org key and the new secret", schema: Credentials } },
    handler: ({ deps, params }) => adminRegenerateSecret(deps, params.id),
  }),

  defineRoute({
    method: "get",
    path: "/admin/organizations/{id}/credentials",
    tag: "Authentication",
    summary: "Read an org's key (the secret is never readable)",
    auth: "admin",
    params: IdParams,
    responses: {
      200: {
        description: "The org key; api_secret is always null",
        schema: Type.Object({
          org_id: UuidString,
          api_key: Type.String(),
          api_secret: Type.Null(),
        }),
      },
    },
    handler: ({ deps, params }) => readCredentials(deps, params.id),
  }),
];
