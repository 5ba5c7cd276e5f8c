// `POST /auth/user-login`: a person proves who they are with an ID token of the configured
// identity provider (OIDC: signature from its JWKS, issuer, audience, expiry), and gets a token
// of this service: a user JWT of their org with their role, or, with no active org yet, a token
// that can only request an org and read that request.
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";
import type { OidcConfig } from "../../config.js";
import { createOrgUserRepository } from "../../store/org-user-repository.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Unauthorized, Unavailable } from "../errors.js";
import { isRole, type Permission, permissionsOfRole, type Role } from "./permissions.js";

export interface UserLoginResult {
  token: string;
  expires_in: number;
  user: {
    id: string | null;
    email: string | null;
    org_id: string | null;
    role: Role | null;
    permissions: Permission[];
    /** `active` when the token is an org token; else `no_organization` or `awaiting_approval`. */
    status: "active" | "no_organization" | "awaiting_approval";
  };
}

export interface IdentityVerifier {
  /** The verified claims of an identity-provider token; throws when it does not verify. */
  verify(idpToken: string): Promise<JWTPayload>;
}

/** Verifies ID tokens against the provider's JWKS (fetched and cached by jose). */
export function createOidcVerifier(oidc: OidcConfig): IdentityVerifier {
  const jwks = createRemoteJWKSet(new URL(oidc.jwksUrl));
  return {
    async verify(idpToken) {
      const { payload } = await jwtVerify(idpToken, jwks, {
        issuer: oidc.issuer,
        audience: oidc.audience,
        requiredClaims: ["exp", "sub"],
      });
      return payload;
    },
  };
}

/** Exchanges an identity-provider token for a token of this service. */
export async function userLogin(
  deps: DomainDeps,
  verifier: IdentityVerifier | null,
  body: { idp_token?: string },
): Promise<UserLoginResult> {
  if (!body.idp_token) throw new BadRequest("idp_token is required");
  if (!verifier) throw new Unavailable("User login is not configured on this server");
  let claims: JWTPayload;
  try {
    claims = await verifier.verify(body.idp_token);
  } catch {
    throw new Unauthorized("Authentication failed");
  }
  const subject = claims.sub as string;
  const email =
    typeof claims.email === "string" && claims.email.includes("@")
      ? claims.email.trim().toLowerCase()
      : null;

  const memberships = await createOrgUserRepository(deps.db).findMemberships(subject, email);
  const orgs = createOrganizationRepository(deps.db);
  let waiting = false;
  for (const member of memberships) {
    const org = await orgs.findById(member.org_id);
    if (!org || member.status !== "active" || !isRole(member.role)) continue;
    if (org.status !== "active") {
      waiting ||= org.request_status === "pending" || org.request_status === "rejected";
      continue;
    }
    if (member.subject === null) {
      // First sign-in: bind the email invitation to this identity.
      await createOrgUserRepository(deps.db).update(org.id, member.id, {
        subject,
        updated_at: deps.clock().toISOString(),
      });
    }
    const token = await deps.tokens.sign({
      typ: "user",
      org_id: org.id,
      sub: member.id,
      role: member.role,
    });
    return {
      token,
      expires_in: 86400,
      user: {
        id: member.id,
        email: member.email,
        org_id: org.id,
        role: member.role,
        permissions: permissionsOfRole(member.role),
        status: "active",
      },
    };
  }
  const token = await deps.tokens.sign({ typ: "pending", sub: subject, email });
  return {
    token,
    expires_in: 86400,
    user: {
      id: null,
      email,
      org_id: null,
      role: null,
      permissions: [],
      status: waiting ? "awaiting_approval" : "no_organization",
    },
  };
}
