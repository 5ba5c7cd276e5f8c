// POST /auth/user-login with ID tokens signed by a test identity provider (JWKS on loopback),
// and role-based permissions of platform users.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { bearer, expectError, startTestApp, type TestApp } from "./helpers.js";
import { AUDIENCE, startIdentityProvider, type TestIdentityProvider } from "./identity-provider.js";

let idp: TestIdentityProvider;
let app: TestApp;
let org: { id: string; api_key: string; api_secret: string };

test.before(async () => {
  idp = await startIdentityProvider();
  app = await startTestApp({ env: idp.env });
  org = await app.createOrg();
});
test.after(async () => {
  await app.close();
  await idp.close();
});

const login = async (idpToken: string | undefined) =>
  app.request("POST", "/api/v1/auth/user-login", {
    body: idpToken === undefined ? {} : { idp_token: idpToken },
  });

async function addMember(email: string, role: string) {
  const res = await app.request("POST", "/api/v1/org-users", {
    headers: { "x-api-key": org.api_key },
    body: { email, role },
  });
  assert.is(res.status, 201, res.text);
  return res.body as { id: string };
}

test("a member signs in: token with exp, role and the role's permissions", async () => {
  await addMember("Carol@Example.test", "manager");
  const res = await login(await idp.idToken({ sub: "idp|carol", email: "carol@example.test" }));
  assert.is(res.status, 200, res.text);
  assert.is(res.body.user.role, "manager");
  assert.is(res.body.user.org_id, org.id);
  assert.ok(res.body.user.permissions.includes("calls.read"));
  assert.not.ok(res.body.user.permissions.includes("org.manage"));
  const payload = JSON.parse(Buffer.from(res.body.token.split(".")[1], "base64url").toString());
  assert.type(payload.exp, "number");
  const own = await app.request("GET", `/api/v1/organizations/${org.id}`, {
    headers: bearer(res.body.token),
  });
  assert.is(own.status, 200);
  expectError(
    await app.request("PUT", `/api/v1/organizations/${org.id}`, {
      headers: bearer(res.body.token),
      body: { name: "x" },
    }),
    403,
    "Role 'manager' lacks permission: org.manage",
  );
  // Once bound, the subject identifies the person even if the email changes at the provider.
  const renamed = await login(
    await idp.idToken({ sub: "idp|carol", email: "carol.new@example.test" }),
  );
  assert.is(renamed.body.user.role, "manager");
});

test("role changes and removal take effect on the next request", async () => {
  const member = await addMember("dave@example.test", "viewer");
  const { token } = (
    await login(await idp.idToken({ sub: "idp|dave", email: "dave@example.test" }))
  ).body;
  expectError(
    await app.request("GET", "/api/v1/org-users", { headers: bearer(token) }),
    403,
    "Role 'viewer' lacks permission: org_users.read",
  );
  await app.request("PUT", `/api/v1/org-users/${member.id}`, {
    headers: { "x-api-key": org.api_key },
    body: { role: "admin" },
  });
  assert.is(
    (await app.request("GET", "/api/v1/org-users", { headers: bearer(token) })).status,
    200,
  );
  await app.request("DELETE", `/api/v1/org-users/${member.id}`, {
    headers: { "x-api-key": org.api_key },
  });
  expectError(
    await app.request("GET", "/api/v1/org-users", { headers: bearer(token) }),
    401,
    "Invalid authentication or organization not active",
  );
});

test("bad identity tokens: 401 Authentication failed; missing token 400", async () => {
  expectError(await login(undefined), 400, "idp_token is required");
  const claims = { sub: "idp|mallory", email: "mallory@example.test" };
  for (const bad of [
    await idp.idToken(claims, { otherKey: true }),
    await idp.idToken(claims, { audience: `${AUDIENCE}-other` }),
    await idp.idToken(claims, { expiresIn: -60 }),
    "garbage",
  ]) {
    expectError(await login(bad), 401, "Authentication failed");
  }
});

test("duplicate member 409; the last owner cannot be removed", async () => {
  const owner = await addMember("erin@example.test", "owner");
  const dup = await app.request("POST", "/api/v1/org-users", {
    headers: { "x-api-key": org.api_key },
    body: { email: "ERIN@example.test", role: "agent" },
  });
  expectError(dup, 409, "User erin@example.test is already a member of this organization");
  expectError(
    await app.request("DELETE", `/api/v1/org-users/${owner.id}`, {
      headers: { "x-api-key": org.api_key },
    }),
    400,
    "An organization must keep at least one active owner",
  );
});

test("without PBX_OIDC_* user login answers 503", async () => {
  const bare = await startTestApp();
  try {
    expectError(
      await bare.request("POST", "/api/v1/auth/user-login", { body: { idp_token: "x" } }),
      503,
      "User login is not configured on this server",
    );
  } finally {
    await bare.close();
  }
});

test.run();
