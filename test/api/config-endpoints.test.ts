// /config/* and /admin/regenerate-gateway at the HTTP edge: auth, roles and the answer of a
// server without an engine. The deploys themselves are tested in test/integration/.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { bearer, expectError, INTERNAL_KEY, startTestApp } from "./helpers.js";

test("config endpoints need org credentials", async () => {
  const app = await startTestApp();
  try {
    for (const [method, path] of [
      ["POST", "/api/v1/config/deploy"],
      ["POST", "/api/v1/config/reload"],
      ["GET", "/api/v1/config/status"],
    ] as const) {
      expectError(await app.request(method, path), 401, "Authentication required");
    }
  } finally {
    await app.close();
  }
});

test("an ak_ key cannot deploy (config.deploy is a role permission)", async () => {
  const app = await startTestApp();
  try {
    const org = await app.createOrg();
    const key = await app.request("POST", "/api/v1/api-keys", {
      headers: { "x-api-key": org.api_key },
      body: { name: "ci", permissions: ["calls.read"] },
    });
    assert.is(key.status, 201, key.text);
    const headers = { "x-api-key": key.body.api_key as string };
    expectError(
      await app.request("POST", "/api/v1/config/deploy", { headers }),
      403,
      "API key lacks permission: config.deploy",
    );
    expectError(
      await app.request("POST", `/api/v1/organizations/${org.id}/regenerate`, { headers }),
      403,
      "API key lacks permission: config.deploy",
    );
  } finally {
    await app.close();
  }
});

test("without an engine the deploy endpoints answer 503; regenerate falls back to scheduling", async () => {
  const app = await startTestApp();
  try {
    const org = await app.createOrg();
    const headers = { "x-api-key": org.api_key };
    expectError(
      await app.request("POST", "/api/v1/config/deploy", { headers }),
      503,
      "Engine deploys are not configured on this server",
    );
    app.deploys.length = 0;
    const res = await app.request("POST", `/api/v1/organizations/${org.id}/regenerate`, {
      headers,
    });
    assert.is(res.status, 202, res.text);
    assert.equal(res.body, { success: true, scheduled: true });
    assert.equal(app.deploys, [org.id]);
  } finally {
    await app.close();
  }
});

test("regenerate-gateway takes an admin JWT or the internal key, never an org credential", async () => {
  const app = await startTestApp();
  try {
    const org = await app.createOrg();
    expectError(
      await app.request("POST", "/api/v1/admin/regenerate-gateway", {
        headers: { "x-api-key": org.api_key },
      }),
      403,
      "Admin access required",
    );
    // Authenticated either way; this server has no engine, so 503 rather than 401/403.
    for (const headers of [bearer(await app.adminToken()), { "x-internal-key": INTERNAL_KEY }]) {
      expectError(
        await app.request("POST", "/api/v1/admin/regenerate-gateway", { headers }),
        503,
        "Engine deploys are not configured on this server",
      );
    }
  } finally {
    await app.close();
  }
});

test("the OpenAPI document lists the configuration operations", async () => {
  const app = await startTestApp();
  try {
    const paths = app.pbx.document.paths as Record<string, Record<string, { tags: string[] }>>;
    assert.equal(paths["/config/deploy"]?.post?.tags, ["Configuration Management"]);
    assert.equal(paths["/config/reload"]?.post?.tags, ["Configuration Management"]);
    assert.equal(paths["/config/status"]?.get?.tags, ["Configuration Management"]);
    assert.ok(paths["/admin/regenerate-gateway"]?.post);
  } finally {
    await app.close();
  }
});

test.run();
