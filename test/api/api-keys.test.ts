// `ak_` keys: shown once, listed without secrets, permissions enforced, revocation at once.

import { Type } from "@sinclair/typebox";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ADMIN_TOKEN_REFUSAL } from "../../src/api/admin-scope.js";
import { orgCaller } from "../../src/api/principals.js";
import { defineRoute } from "../../src/api/registry.js";
import { allRoutes } from "../../src/api/routes/index.js";
import { bearer, expectError, startTestApp, type TestApp } from "./helpers.js";

// Stand-ins for the calls/CRM routes other files will declare: same mechanism, known permission.
const probeRoutes = [
  defineRoute({
    method: "get",
    path: "/test-probe/calls",
    tag: "Call Management",
    summary: "probe needing calls.read",
    auth: "org",
    permission: "calls.read",
    responses: { 200: { description: "ok", schema: Type.Object({ org_id: Type.String() }) } },
    handler: ({ principal }) => ({ org_id: orgCaller(principal).orgId }),
  }),
  defineRoute({
    method: "post",
    path: "/test-probe/crm",
    tag: "CRM",
    summary: "probe needing crm.write",
    auth: "org",
    permission: "crm.write",
    responses: { 200: { description: "ok" } },
    handler: () => ({ ok: true }),
  }),
];

let app: TestApp;
let org: { id: string; api_key: string; api_secret: string };
const orgKey = () => ({ "x-api-key": org.api_key });

test.before(async () => {
  app = await startTestApp({ routes: [...allRoutes, ...probeRoutes] });
  org = await app.createOrg();
});
test.after(async () => app.close());

async function createKey(permissions: string[], name = "crm app") {
  const res = await app.request("POST", "/api/v1/api-keys", {
    headers: orgKey(),
    body: { name, permissions },
  });
  assert.is(res.status, 201, res.text);
  return res.body;
}

test("create answers ak_/as_ credentials once; list and get never show them", async () => {
  const created = await createKey(["crm.read", "calls.read"]);
  assert.match(created.api_key, /^ak_[0-9a-f]{40}$/);
  assert.match(created.api_secret, /^as_[0-9a-f]{40}$/);
  assert.equal(created.permissions, ["calls.read", "crm.read"], "canonical order");
  assert.is(created.revoked, false);
  const list = await app.request("GET", "/api/v1/api-keys", { headers: orgKey() });
  const listed = list.body.data.find((k: { id: string }) => k.id === created.id);
  assert.ok(listed);
  assert.not.ok(list.text.includes(created.api_key), "the key never appears again");
  assert.not.ok(list.text.includes(created.api_secret));
  assert.is(listed.key_prefix, created.api_key.slice(0, 11));
  const one = await app.request("GET", `/api/v1/api-keys/${created.id}`, { headers: orgKey() });
  assert.is(one.body.name, "crm app");
  assert.not.ok("api_key" in one.body);
});

test("unknown permission and missing name are 400 with readable messages", async () => {
  const bad = await app.request("POST", "/api/v1/api-keys", {
    headers: orgKey(),
    body: { name: "x", permissions: ["calls.everything"] },
  });
  assert.is(bad.status, 400);
  assert.match(bad.body.error, /^permissions\[0\] must be one of: calls\.read, /);
  expectError(
    await app.request("POST", "/api/v1/api-keys", { headers: orgKey(), body: { permissions: [] } }),
    400,
    "name is required",
  );
});

test("an ak_ key authenticates alone and is limited to its permissions", async () => {
  const key = await createKey(["calls.read"]);
  const headers = { "x-api-key": key.api_key };
  const ok = await app.request("GET", "/api/v1/test-probe/calls", { headers });
  assert.is(ok.status, 200);
  assert.is(ok.body.org_id, org.id);
  expectError(
    await app.request("POST", "/api/v1/test-probe/crm", { headers }),
    403,
    "API key lacks permission: crm.write",
  );
  // Org administration is never within an ak_ key's reach.
  expectError(
    await app.request("GET", "/api/v1/api-keys", { headers }),
    403,
    "API key lacks permission: api_keys.manage",
  );
  // Org-wide credentials hold every permission.
  assert.is(
    (await app.request("POST", "/api/v1/test-probe/crm", { headers: orgKey() })).status,
    200,
  );
});

test("revoking (DELETE or POST /revoke) stops the key on the very next request", async () => {
  for (const how of ["delete", "post"] as const) {
    const key = await createKey(["calls.read"], `revoke via ${how}`);
    const headers = { "x-api-key": key.api_key };
    assert.is((await app.request("GET", "/api/v1/test-probe/calls", { headers })).status, 200);
    const res =
      how === "delete"
        ? await app.request("DELETE", `/api/v1/api-keys/${key.id}`, { headers: orgKey() })
        : await app.request("POST", `/api/v1/api-keys/${key.id}/revoke`, { headers: orgKey() });
    assert.is(res.status, how === "delete" ? 204 : 200);
    if (how === "post") assert.is(res.body.revoked, true);
    expectError(
      await app.request("GET", "/api/v1/test-probe/calls", { headers }),
      401,
      "Invalid authentication or organization not active",
    );
  }
});

test("another org's key id is 404 and cannot be revoked", async () => {
  const mine = await createKey(["calls.read"], "mine");
  const other = await app.createOrg("Other");
  expectError(
    await app.request("DELETE", `/api/v1/api-keys/${mine.id}`, {
      headers: { "x-api-key": other.api_key },
    }),
    404,
    "API key not found",
  );
  assert.is(
    (
      await app.request("GET", "/api/v1/test-probe/calls", {
        headers: { "x-api-key": mine.api_key },
      })
    ).status,
    200,
  );
});

test("an ak_ key of org A acts as org A only", async () => {
  const key = await createKey(["calls.read"], "scoped");
  const other = await app.createOrg("Third");
  expectError(
    await app.request("GET", `/api/v1/organizations/${other.id}`, {
      headers: { "x-api-key": key.api_key },
    }),
    403,
    "Access denied to this organization",
  );
  const login = await app.request("POST", "/api/v1/auth/login", {
    body: { api_key: key.api_key, api_secret: key.api_secret },
  });
  expectError(login, 401, "Invalid credentials");
  // Admin tokens are no substitute.
  expectError(
    await app.request("GET", "/api/v1/api-keys", { headers: bearer(await app.adminToken()) }),
    403,
    ADMIN_TOKEN_REFUSAL,
  );
});

test.run();
