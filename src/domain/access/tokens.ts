// The service's own JWTs: HS256 only (pinned on verify), `exp` always present and required.
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { Clock } from "../../clock.js";
import { Unauthorized } from "../errors.js";
import type { Role } from "./permissions.js";

/** 24 hours: org, admin and impersonation tokens (SPEC.md §8). */
export const TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

export type TokenClaims =
  /** Org scope from org key + secret, or from the internal key. */
  | { typ: "org"; org_id: string }
  /** Admin console; valid only on the admin endpoints (src/api/admin-scope.ts). */
  | { typ: "admin"; sub: string }
  /** A platform user of an org (`sub` = org user id), or an admin impersonating the owner. */
  | { typ: "user"; org_id: string; sub: string; role: Role; impersonated_by?: string }
  /** A person signed in with the identity provider who belongs to no active org yet. */
  | { typ: "pending"; sub: string; email: string | null };

export interface TokenService {
  sign(claims: TokenClaims): Promise<string>;
  /** The claims of a valid token; throws Unauthorized(`Authentication failed`) otherwise. */
  verify(token: string): Promise<TokenClaims>;
}

const TYPES = new Set(["org", "admin", "user", "pending"]);

/** Signs and verifies tokens with `secret`, reading the time from `clock`. */
export function createTokenService(secret: Uint8Array, clock: Clock): TokenService {
  return {
    async sign(claims) {
      const now = Math.floor(clock().getTime() / 1000);
      return new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuedAt(now)
        .setExpirationTime(now + TOKEN_LIFETIME_SECONDS)
        .sign(secret);
    },

    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, secret, {
          algorithms: ["HS256"],
          requiredClaims: ["exp"],
          currentDate: clock(),
        });
        if (typeof payload.typ !== "string" || !TYPES.has(payload.typ)) {
          throw new Unauthorized("Authentication failed");
        }
        return payload as unknown as TokenClaims;
      } catch (error) {
        if (error instanceof Unauthorized || error instanceof joseErrors.JOSEError) {
          throw new Unauthorized("Authentication failed");
        }
        throw error;
      }
    },
  };
}
