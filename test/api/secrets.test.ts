// Credential material: scrypt hashes, digests, and the sealed org key.
import { randomBytes } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  decrypt,
  digest,
  encrypt,
  hashSecret,
  newToken,
  verifySecret,
} from "../../src/domain/secrets.js";

test("hashSecret/verifySecret: salted, and only the right secret verifies", () => {
  const a = hashSecret("s3cret");
  assert.is.not(a, hashSecret("s3cret"), "salted");
  assert.ok(verifySecret("s3cret", a));
  assert.not.ok(verifySecret("s3cret!", a));
  assert.not.ok(verifySecret("s3cret", "garbage"));
});

test("encrypt/decrypt round-trips; another key or an altered value fails", () => {
  const key = randomBytes(32);
  const sealed = encrypt("org_abc", key);
  assert.not.ok(sealed.includes("org_abc"));
  assert.is(decrypt(sealed, key), "org_abc");
  assert.throws(() => decrypt(sealed, randomBytes(32)));
  const parts = sealed.split(".");
  parts[3] = Buffer.from("org_abd").toString("base64url");
  assert.throws(() => decrypt(parts.join("."), key));
});

test("tokens carry their prefix and 160 random bits; digests are hex SHA-256", () => {
  assert.match(newToken("ak_"), /^ak_[0-9a-f]{40}$/);
  assert.is.not(newToken("ak_"), newToken("ak_"));
  assert.is(digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test.run();
