// Every org credential of SPEC.md §5 and each §7 message of §4.1/§5.

import { SignJWT } from "jose";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ADMIN_TOKEN_REFUSAL } from "../../src/api/admin-scope.js";
import { bearer, expectError, INTERNAL_KEY, startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let org: { id: string; api_key: string; api_secret: string };
let other: { id: string; api_key: string; api_secret: string };

test.before(async () => {
  app = await startTestApp();
  org = await app.createOrg("Acme");
  other = await app.createOrg("Globex");
});
test.after(async () => app.close());

const own = () => `/api/v1/organizations/${org.id}`;

async function login(apiKey: string, apiSecret: string) {
  return app.request("POST", "/api/v1/auth/login", {
    body: { api_key: apiKey, api_secret: apiSecret },
  });
}

test("no credential on an org endpoint: 401 Authentication required", async () => {
  expectError(await app.request("GET", own()), 401, "Authentication required");
});

test("org key (X-API-Key org_) grants the org scope", async () => {
  const res = await app.request("GET", own(), { headers: { "x-api-key": org.api_key } });
  assert.is(res.status, 200);
  assert.is(res.body.id, org.id);
  assert.is(res.body.context_prefix, `org_${org.id}_`);
});

test("unknown X-API-Key (org_ or ak_): 401 Invalid authentication or organization not active", async () => {
  for (const key of ["org_nope", "ak_nope", "whatever"]) {
    expectError(
      await app.request("GET", own(), { headers: { "x-api-key": key } }),
      401,
      "Invalid authentication or organization not active",
    );
  }
});

test("/auth/login: missing fields give 400 API key and secret are required", async () => {
  for (const body of [
    {},
    { api_key: org.api_key },
    { api_secret: "x" },
    { api_key: "", api_secret: "" },
  ]) {
    expectError(
      await app.request("POST", "/api/v1/auth/login", { body }),
      400,
      "API key and secret are required",
    );
  }
});

test("/auth/login: wrong secret or an ak_ key give 401 Invalid credentials", async () => {
  expectError(await login(org.api_key, "wrong"), 401, "Invalid credentials");
  expectError(await login(org.api_key, other.api_secret), 401, "Invalid credentials");
  expectError(await login("ak_0123456789", org.api_secret), 401, "Invalid credentials");
});

test("/auth/login answers a 24 h HS256 JWT that authenticates as the org", async () => {
  const res = await login(org.api_key, org.api_secret);
  assert.is(res.status, 200);
  assert.is(res.body.expires_in, 86400);
  const [header, payload] = (res.body.token as string)
    .split(".")
    .slice(0, 2)
    .map((p) => JSON.parse(Buffer.from(p, "base64url").toString()));
  assert.is(header.alg, "HS256");
  assert.is(payload.exp - payload.iat, 86400);
  const get = await app.request("GET", own(), { headers: bearer(res.body.token) });
  assert.is(get.status, 200);
  assert.is(get.body.id, org.id);
});

test("expired JWT: 401 Authentication failed", async () => {
  const { token } = (await login(org.api_key, org.api_secret)).body;
  app.clock.advance(24 * 3600 - 5);
  assert.is((await app.request("GET", own(), { headers: bearer(token) })).status, 200);
  app.clock.advance(10);
  expectError(
    await app.request("GET", own(), { headers: bearer(token) }),
    401,
    "Authentication failed",
  );
});

test("tampered, malformed, other-algorithm and exp-less JWTs: 401 Authentication failed", async () => {
  const { token } = (await login(org.api_key, org.api_secret)).body as { token: string };
  const [h, p, s] = token.split(".");
  const payload = JSON.parse(Buffer.from(p!, "base64url").toString());
  const forged = Buffer.from(JSON.stringify({ ...payload, org_id: other.id })).toString(
    "base64url",
  );
  const secret = app.config.jwtSecret;
  const now = Math.floor(app.clock.now.getTime() / 1000);
  const hs512 = await new SignJWT({ typ: "org", org_id: org.id })
    .setProtectedHeader({ alg: "HS512" })
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(secret);
  const noExp = await new SignJWT({ typ: "org", org_id: org.id })
    .setProtectedHeader({ alg: "HS256" })
    .sign(secret);
  const unsigned = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${p}.`;
  for (const bad of [
    `${h}.${forged}.${s}`,
    `${h}.${p}.${s}x`,
    "not-a-jwt",
    hs512,
    noExp,
    unsigned,
  ]) {
    expectError(
      await app.request("GET", own(), { headers: bearer(bad) }),
      401,
      "Authentication failed",
    );
  }
  expectError(
    await app.request("GET", own(), { headers: { authorization: `Basic ${org.api_key}` } }),
    401,
    "Authentication failed",
  );
});

test("cross-org: org A's credentials on org B's resource give 403", async () => {
  const { token } = (await login(org.api_key, org.api_secret)).body;
  const path = `/api/v1/organizations/${other.id}`;
  expectError(
    await app.request("GET", path, { headers: bearer(token) }),
    403,
    "Access denied to this organization",
  );
  expectError(
    await app.request("PUT", path, {
      headers: { "x-api-key": org.api_key },
      body: { name: "Mine now" },
    }),
    403,
    "Access denied to this organization",
  );
});

test("admin login: wrong password 401 Invalid credentials; missing fields 400", async () => {
  expectError(
    await app.request("POST", "/api/v1/admin/auth", {
      body: { admin_username: "admin", admin_password: "nope" },
    }),
    401,
    "Invalid credentials",
  );
  expectError(
    await app.request("POST", "/api/v1/admin/auth", { body: { admin_username: "admin" } }),
    400,
    "admin_username and admin_password are required",
  );
});

test("admin token is refused on org routes; org credentials are refused on admin routes", async () => {
  const admin = await app.adminToken();
  expectError(
    await app.request("GET", own(), { headers: bearer(admin) }),
    403,
    ADMIN_TOKEN_REFUSAL,
  );
  expectError(
    await app.request("GET", "/api/v1/admin/organizations/pending", {
      headers: { "x-api-key": org.api_key },
    }),
    403,
    "Admin access required",
  );
  expectError(
    await app.request("GET", "/api/v1/admin/organizations/pending"),
    401,
    "Authentication required",
  );
  assert.is(
    (await app.request("GET", "/api/v1/admin/organizations/pending", { headers: bearer(admin) }))
      .status,
    200,
  );
});

test("internal key + org_id grants that org's scope; without org_id 400; wrong key 401", async () => {
  const res = await app.request("GET", `${own()}?org_id=${org.id}`, {
    headers: { "x-internal-key": INTERNAL_KEY },
  });
  assert.is(res.status, 200);
  assert.is(res.body.id, org.id);
  const upper = await app.request("GET", `${own()}?org_id=${org.id.toUpperCase()}`, {
    headers: { "x-internal-key": INTERNAL_KEY },
  });
  assert.is(upper.body.id, org.id, "org_id is a UUID: any letter case names the org");
  expectError(
    await app.request("GET", own(), { headers: { "x-internal-key": INTERNAL_KEY } }),
    400,
    "org_id query parameter is required with X-Internal-Key",
  );
  expectError(
    await app.request("GET", `${own()}?org_id=${org.id}`, {
      headers: { "x-internal-key": "wrong" },
    }),
    401,
    "Invalid internal key",
  );
  // Scoped to the named org: another org's resource is still off limits.
  expectError(
    await app.request("GET", `/api/v1/organizations/${other.id}?org_id=${org.id}`, {
      headers: { "x-internal-key": INTERNAL_KEY },
    }),
    403,
    "Access denied to this organization",
  );
});

test("POST /auth/admin-token (internal key) answers an org token without the secret", async () => {
  expectError(
    await app.request("POST", "/api/v1/auth/admin-token", { body: { org_id: org.id } }),
    401,
    "Authentication required",
  );
  const res = await app.request("POST", "/api/v1/auth/admin-token", {
    headers: { "x-internal-key": INTERNAL_KEY },
    body: { org_id: org.id },
  });
  assert.is(res.status, 200);
  assert.is((await app.request("GET", own(), { headers: bearer(res.body.token) })).status, 200);
});

test("POST /admin/impersonate/{orgId}: admin or internal key, owner-role token of that org", async () => {
  const res = await app.request("POST", `/api/v1/admin/impersonate/${org.id}`, {
    headers: bearer(await app.adminToken()),
  });
  assert.is(res.status, 200);
  assert.is(res.body.user.role, "owner");
  assert.ok(res.body.user.permissions.includes("calls.read"));
  assert.is((await app.request("GET", own(), { headers: bearer(res.body.token) })).status, 200);
  const viaInternal = await app.request("POST", `/api/v1/admin/impersonate/${org.id}`, {
    headers: { "x-internal-key": INTERNAL_KEY },
  });
  assert.is(viaInternal.status, 200);
  expectError(
    await app.request("POST", `/api/v1/admin/impersonate/${org.id}`, {
      headers: { "x-api-key": org.api_key },
    }),
    403,
    "Admin access required",
  );
});

test("regenerate-secret: own org only; the old secret stops working; admin reads the key only", async () => {
  expectError(
    await app.request("POST", `/api/v1/organizations/${other.id}/regenerate-secret`, {
      headers: { "x-api-key": org.api_key },
    }),
    403,
    "Access denied to this organization",
  );
  const res = await app.request("POST", `${own()}/regenerate-secret`, {
    headers: { "x-api-key": org.api_key },
  });
  assert.is(res.status, 200);
  assert.is(res.body.api_key, org.api_key);
  assert.is.not(res.body.api_secret, org.api_secret);
  expectError(await login(org.api_key, org.api_secret), 401, "Invalid credentials");
  assert.is((await login(org.api_key, res.body.api_secret)).status, 200);
  org.api_secret = res.body.api_secret;

  const admin = bearer(await app.adminToken());
  const creds = await app.request("GET", `/api/v1/admin/organizations/${other.id}/credentials`, {
    headers: admin,
  });
  assert.equal(creds.body, { org_id: other.id, api_key: other.api_key, api_secret: null });
  // Reading never changes state: the secret still works.
  assert.is((await login(other.api_key, other.api_secret)).status, 200);
  const locked = await app.request(
    "POST",
    `/api/v1/admin/organizations/${other.id}/regenerate-secret`,
    {
      headers: admin,
    },
  );
  assert.is(locked.status, 200);
  assert.is((await login(other.api_key, locked.body.api_secret)).status, 200);
  other.api_secret = locked.body.api_secret;
});

test("an inactive org fails every credential with 401 Invalid authentication or organization not active", async () => {
  const suspended = await app.createOrg("Soon suspended");
  const { token } = (await login(suspended.api_key, suspended.api_secret)).body;
  const key = await app.request("POST", "/api/v1/api-keys", {
    headers: { "x-api-key": suspended.api_key },
    body: { name: "k", permissions: [] },
  });
  const admin = bearer(await app.adminToken());
  const put = await app.request("PUT", `/api/v1/admin/organizations/${suspended.id}`, {
    headers: admin,
    body: { status: "suspended" },
  });
  assert.is(put.body.status, "suspended");
  const path = `/api/v1/organizations/${suspended.id}`;
  const message = "Invalid authentication or organization not active";
  expectError(
    await app.request("GET", path, { headers: { "x-api-key": suspended.api_key } }),
    401,
    message,
  );
  expectError(
    await app.request("GET", path, { headers: { "x-api-key": key.body.api_key } }),
    401,
    message,
  );
  expectError(await app.request("GET", path, { headers: bearer(token) }), 401, message);
  expectError(
    await app.request("GET", `${path}?org_id=${suspended.id}`, {
      headers: { "x-internal-key": INTERNAL_KEY },
    }),
    401,
    message,
  );
  expectError(await login(suspended.api_key, suspended.api_secret), 401, message);
  await app.request("PUT", `/api/v1/admin/organizations/${suspended.id}`, {
    headers: admin,
    body: { status: "active" },
  });
  assert.is((await app.request("GET", path, { headers: bearer(token) })).status, 200);
});

test("X-API-Key is checked before the bearer token (SPEC.md §5 order)", async () => {
  const { token } = (await login(org.api_key, org.api_secret)).body;
  expectError(
    await app.request("GET", own(), { headers: { "x-api-key": "org_unknown", ...bearer(token) } }),
    401,
    "Invalid authentication or organization not active",
  );
});

test.run();
