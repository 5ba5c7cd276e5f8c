// Credential material: random keys with their prefixes, scrypt hashes of secrets, SHA-256
// digests for lookups, and AES-256-GCM for the one value (the org key) that must stay readable.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  scryptSync,
  timingSafeEqual,
} from "node:crypto";

/** A fresh credential: `prefix` followed by 40 random hex characters. */
export function newToken(prefix: string): string {
  return `${prefix}${randomBytes(20).toString("hex")}`;
}

/** Hex SHA-256 of `value`: what keys are looked up by. */
export function digest(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

const SCRYPT_KEYLEN = 32;

/** `scrypt$<salt>$<hash>` (base64url) of a secret. */
export function hashSecret(secret: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(secret, salt, SCRYPT_KEYLEN);
  return `scrypt$${salt.toString("base64url")}$${hash.toString("base64url")}`;
}

/** True when `secret` matches a `hashSecret` value; constant-time, false on any malformed hash. */
export function verifySecret(secret: string, stored: string): boolean {
  const [scheme, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = scryptSync(secret, Buffer.from(salt, "base64url"), expected.length);
  return expected.length === SCRYPT_KEYLEN && timingSafeEqual(actual, expected);
}

/** Constant-time equality of two strings (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** `v1.<iv>.<tag>.<ciphertext>` (base64url) of `plain` under a 32-byte key. */
export function encrypt(plain: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag();
  return ["v1", iv, tag, body]
    .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
    .join(".");
}

/** The plaintext of an `encrypt` value; throws when the key is wrong or the value was altered. */
export function decrypt(sealed: string, key: Buffer): string {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== "v1" || !iv || !tag || body === undefined)
    throw new Error("unknown sealed format");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([
    decipher.update(Buffer.from(body, "base64url")),
    decipher.final(),
  ]).toString("utf8");
}
