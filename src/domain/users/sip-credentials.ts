// SIP credentials of users, the one place they are made: the auth username, a generated password
// (strong and random when the caller gives none, shown once) and the stored credential, only the
// MD5 digest PJSIP authenticates with (`password_digest=md5:<hash>`, `sipDigest` of the model,
// which also resolves `password_env` in org files). Users, org provisioning and apply use these.
import { randomBytes } from "node:crypto";
import type { User } from "../../model/org-state.js";
import { sipDigest } from "../../model/secrets.js";

/**
 * The SIP auth username of a user's endpoint: `<context_prefix><extension>`. It is part of the
 * digest, so a changed extension needs a new password.
 */
export function sipUsernameOf(contextPrefix: string, extension: string): string {
  return `${contextPrefix}${extension}`;
}

/** A fresh password: 18 random bytes (144 bits) in base64url, 24 characters. */
export function generateSipPassword(): string {
  return randomBytes(18).toString("base64url");
}

/** The stored credential for `password` (the password itself is never stored). */
export function sipCredential(
  contextPrefix: string,
  extension: string,
  password: string,
): NonNullable<User["sip"]> {
  return { md5_cred: sipDigest(sipUsernameOf(contextPrefix, extension), password) };
}
