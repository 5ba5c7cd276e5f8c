// Organizations: admin creation, own-org settings, and the request -> approval/rejection flow of
// SPEC.md §3 driven by people who sign in with the identity provider.
import { Ajv } from "ajv";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { OrgStateSchema } from "../../src/model/org-state.js";
import { loadOrgState } from "../../src/store/load-org-state.js";
import { bearer, expectError, startTestApp, type TestApp } from "./helpers.js";
import { startIdentityProvider, type TestIdentityProvider } from "./identity-provider.js";

let idp: TestIdentityProvider;
let app: TestApp;

test.before(async () => {
  idp = await startIdentityProvider();
  app = await startTestApp({ env: idp.env });
});
test.after(async () => {
  await app.close();
  await idp.close();
});

async function signIn(sub: string, email: string) {
  const res = await app.request("POST", "/api/v1/auth/user-login", {
    body: { idp_token: await idp.idToken({ sub, email }) },
  });
  assert.is(res.status, 200, res.text);
  return res.body as {
    token: string;
    user: { role: string | null; status: string; permissions: string[]; org_id: string | null };
  };
}

test("POST /organizations (admin) creates an active org, credentials once, and schedules a deploy", async () => {
  const admin = bearer(await app.adminToken());
  const res = await app.request("POST", "/api/v1/organizations", {
    headers: admin,
    body: { name: "Initech", type: "test", settings: { recording_enabled: false } },
  });
  assert.is(res.status, 201);
  assert.is(res.body.status, "active");
  assert.match(res.body.api_key, /^org_/);
  assert.ok(res.body.api_secret);
  assert.is(res.body.settings.recording_enabled, false);
  assert.ok(app.deploys.includes(res.body.id));
  const list = await app.request("GET", "/api/v1/organizations", { headers: admin });
  const listed = list.body.data.find((o: { id: string }) => o.id === res.body.id);
  assert.is(listed.name, "Initech");
  assert.not.ok(list.text.includes(res.body.api_secret));
  assert.not.ok(list.text.includes(res.body.api_key));
  expectError(
    await app.request("GET", "/api/v1/organizations", {
      headers: { "x-api-key": res.body.api_key },
    }),
    403,
    "Admin access required",
  );
});

test("PUT /organizations/{id} updates the own org's settings and schedules a deploy", async () => {
  const org = await app.createOrg("Settings org");
  const before = app.deploys.length;
  const res = await app.request("PUT", `/api/v1/organizations/${org.id}`, {
    headers: { "x-api-key": org.api_key },
    body: { settings: { recording_enabled: false, max_concurrent_calls: 4 } },
  });
  assert.is(res.status, 200);
  assert.equal(res.body.settings, { recording_enabled: false, max_concurrent_calls: 4 });
  assert.equal(app.deploys.slice(before), [org.id]);
  const state = await loadOrgState(app.db, org.id);
  assert.is(state.org.settings.recording_enabled, false);
  expectError(
    await app.request("PUT", `/api/v1/organizations/${org.id}`, {
      headers: { "x-api-key": org.api_key },
      body: { settings: { recording_enabled: "no" } },
    }),
    400,
    "settings.recording_enabled must be boolean",
  );
});

test("request -> pending -> admin approval: active org with trunk, route and first extension", async () => {
  const person = await signIn("idp|alice", "Alice@Example.test");
  assert.equal(person.user.status, "no_organization");
  assert.is(person.user.role, null);
  const token = bearer(person.token);
  // The pending token can do nothing else.
  expectError(
    await app.request("GET", "/api/v1/api-keys", { headers: token }),
    403,
    "Your account has no active organization",
  );

  const requested = await app.request("POST", "/api/v1/organizations/requests", {
    headers: token,
    body: { name: "Alice Co" },
  });
  assert.is(requested.status, 201, requested.text);
  assert.is(requested.body.status, "pending");
  assert.is(requested.body.message, "awaiting approval");
  const orgId = requested.body.id as string;
  expectError(
    await app.request("POST", "/api/v1/organizations/requests", {
      headers: token,
      body: { name: "Second" },
    }),
    409,
    "You already have an organization request awaiting approval",
  );

  const mine = await app.request("GET", "/api/v1/organizations/requests", { headers: token });
  assert.equal(
    mine.body.data.map((r: { id: string; message: string }) => [r.id, r.message]),
    [[orgId, "awaiting approval"]],
  );
  const again = await signIn("idp|alice", "alice@example.test");
  assert.is(again.user.status, "awaiting_approval");

  const admin = bearer(await app.adminToken());
  const pending = await app.request("GET", "/api/v1/admin/organizations/pending", {
    headers: admin,
  });
  const entry = pending.body.data.find((r: { id: string }) => r.id === orgId);
  assert.is(entry.requested_by, "alice@example.test");

  const deploysBefore = app.deploys.length;
  const approved = await app.request("POST", `/api/v1/admin/organizations/${orgId}/approve`, {
    headers: admin,
  });
  assert.is(approved.status, 200, approved.text);
  assert.is(approved.body.organization.status, "active");
  assert.is(approved.body.provisioned.extension.extension, "1001");
  assert.is(approved.body.provisioned.extension.sip_username, `org_${orgId}_1001`);
  assert.ok(approved.body.provisioned.extension.sip_password.length >= 12);
  assert.equal(
    app.deploys.slice(deploysBefore),
    [orgId],
    "approval asks for one deploy of that org",
  );
  expectError(
    await app.request("POST", `/api/v1/admin/organizations/${orgId}/approve`, { headers: admin }),
    409,
    "Organization request is not pending (it is approved)",
  );

  const state = await loadOrgState(app.db, orgId);
  const validate = new Ajv({ strict: false }).compile(OrgStateSchema);
  assert.ok(validate(state), JSON.stringify(validate.errors));
  assert.equal(
    state.trunks.map((t) => t.name),
    ["default"],
  );
  assert.equal(
    state.outbound_routes.map((r) => r.trunk),
    ["default"],
  );
  assert.equal(
    state.users.map((u) => u.extension),
    ["1001"],
  );
  assert.match(state.users[0]?.sip?.md5_cred ?? "", /^[0-9a-f]{32}$/);
  assert.not.ok(JSON.stringify(state).includes(approved.body.provisioned.extension.sip_password));
  assert.is(state.org.context_prefix, `org_${orgId}_`);

  // The owner now signs in to the org with the owner role.
  const owner = await signIn("idp|alice", "alice@example.test");
  assert.is(owner.user.status, "active");
  assert.is(owner.user.role, "owner");
  assert.is(owner.user.org_id, orgId);
  assert.ok(owner.user.permissions.includes("org.manage"));
  const own = await app.request("GET", `/api/v1/organizations/${orgId}`, {
    headers: bearer(owner.token),
  });
  assert.is(own.status, 200);
});

test("rejection keeps the org inactive; the owner still sees awaiting approval", async () => {
  const person = await signIn("idp|bob", "bob@example.test");
  const token = bearer(person.token);
  const requested = await app.request("POST", "/api/v1/organizations/requests", {
    headers: token,
    body: { name: "Bob Co" },
  });
  const orgId = requested.body.id as string;
  const admin = bearer(await app.adminToken());
  const rejected = await app.request("POST", `/api/v1/admin/organizations/${orgId}/reject`, {
    headers: admin,
  });
  assert.is(rejected.status, 200);
  assert.is(rejected.body.request_status, "rejected");
  assert.is.not(rejected.body.status, "active");
  const mine = await app.request("GET", "/api/v1/organizations/requests", { headers: token });
  assert.is(mine.body.data[0].message, "awaiting approval");
  const again = await signIn("idp|bob", "bob@example.test");
  assert.is(again.user.status, "awaiting_approval");
  assert.is(again.user.role, null);
  const pending = await app.request("GET", "/api/v1/admin/organizations/pending", {
    headers: admin,
  });
  assert.not.ok(pending.body.data.some((r: { id: string }) => r.id === orgId));
});

test("suspension by the admin: PUT /admin/organizations/{id} with status", async () => {
  const org = await app.createOrg("Suspend me");
  const admin = bearer(await app.adminToken());
  const res = await app.request("PUT", `/api/v1/admin/organizations/${org.id}`, {
    headers: admin,
    body: { status: "suspended" },
  });
  assert.is(res.status, 200);
  assert.is(res.body.status, "suspended");
  expectError(
    await app.request("GET", `/api/v1/organizations/${org.id}`, {
      headers: { "x-api-key": org.api_key },
    }),
    401,
    "Invalid authentication or organization not active",
  );
  expectError(
    await app.request("PUT", `/api/v1/admin/organizations/${org.id}`, {
      headers: admin,
      body: { status: "bogus" },
    }),
    400,
    "status must be one of: active, suspended, inactive",
  );
});

test.run();
