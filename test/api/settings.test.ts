// `/settings`: read, partial update, bounds, a deploy per change, roles, and org scope.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileOrg } from "../../src/compiler/index.js";
import { loadOrgState } from "../../src/store/load-org-state.js";
import { orgKey, type TestOrg } from "./dids-fixtures.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let acme: TestOrg;
let beta: TestOrg;

test.before(async () => {
  app = await startTestApp();
  acme = await app.createOrg("Acme");
  beta = await app.createOrg("Beta");
});
test.after(async () => app.close());

test("GET answers the defaults; PUT is partial and schedules the org's deploy", async () => {
  const initial = await app.request("GET", "/api/v1/settings", { headers: orgKey(acme) });
  assert.equal(initial.body, { recording_enabled: true, max_concurrent_calls: 0 });
  app.deploys.length = 0;
  const limited = await app.request("PUT", "/api/v1/settings", {
    headers: orgKey(acme),
    body: { max_concurrent_calls: 5 },
  });
  assert.is(limited.status, 200, limited.text);
  assert.equal(limited.body, { recording_enabled: true, max_concurrent_calls: 5 });
  const off = await app.request("PUT", "/api/v1/settings", {
    headers: orgKey(acme),
    body: { recording_enabled: false },
  });
  assert.equal(off.body, { recording_enabled: false, max_concurrent_calls: 5 }, "limit kept");
  assert.equal(app.deploys, [acme.id, acme.id]);
  const state = await loadOrgState(app.db, acme.id);
  assert.equal(state.org.settings, { recording_enabled: false, max_concurrent_calls: 5 });
  assert.ok(compileOrg(state).files.length > 0);
});

test("bounds and types: 400 with the field named", async () => {
  expectError(
    await app.request("PUT", "/api/v1/settings", {
      headers: orgKey(acme),
      body: { max_concurrent_calls: -1 },
    }),
    400,
    "max_concurrent_calls must be >= 0",
  );
  expectError(
    await app.request("PUT", "/api/v1/settings", {
      headers: orgKey(acme),
      body: { recording_enabled: "yes" },
    }),
    400,
    "recording_enabled must be boolean",
  );
  expectError(
    await app.request("PUT", "/api/v1/settings", {
      headers: orgKey(acme),
      body: { volume: 11 },
    }),
    400,
    "Unknown field: volume",
  );
});

test("each org sees and changes only its own settings", async () => {
  const other = await app.request("GET", "/api/v1/settings", { headers: orgKey(beta) });
  assert.equal(other.body, { recording_enabled: true, max_concurrent_calls: 0 });
  expectError(await app.request("GET", "/api/v1/settings"), 401, "Authentication required");
});

test("an ak_ key cannot change settings (org.manage is role-only)", async () => {
  const key = await app.request("POST", "/api/v1/api-keys", {
    headers: orgKey(acme),
    body: { name: "crm", permissions: ["crm.read"] },
  });
  expectError(
    await app.request("PUT", "/api/v1/settings", {
      headers: { "x-api-key": key.body.api_key },
      body: { max_concurrent_calls: 1 },
    }),
    403,
    "API key lacks permission: org.manage",
  );
});

test.run();
