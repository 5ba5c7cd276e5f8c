// The contract check every API test runs through (helpers.ts): it must catch an undocumented
// status, a body that breaks the documented schema and an undocumented media type, and accept
// what the document says.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildOpenApiDocument } from "../../src/api/openapi.js";
import { allRoutes } from "../../src/api/routes/index.js";
import { createContract } from "./contract.js";

const check = createContract(
  buildOpenApiDocument(allRoutes, { baseUrl: "http://x", version: "0" }),
  allRoutes,
);
const id = "00000000-0000-4000-8000-000000000000";
const json = (status: number, body: unknown) => ({
  status,
  contentType: "application/json; charset=utf-8",
  body,
});

test("a documented status with a body of its schema passes", () => {
  assert.is(
    check(
      "GET",
      `/api/v1/settings`,
      json(200, { recording_enabled: true, max_concurrent_calls: 0 }),
    ),
    null,
  );
  assert.is(check("GET", `/api/v1/users/${id}`, json(404, { error: "User not found" })), null);
  assert.is(
    check("PUT", `/api/v1/did-pool/admin/${id}`, json(404, { error: "DID not found" })),
    null,
    "an alias is checked as its operation",
  );
});

test("an undocumented status fails", () => {
  const problem = check("GET", `/api/v1/settings`, json(418, { error: "teapot" }));
  assert.match(String(problem), "status 418 is not documented");
});

test("a body off its schema fails, nullable fields included", () => {
  assert.match(
    String(
      check(
        "GET",
        "/api/v1/settings",
        json(200, { recording_enabled: "yes", max_concurrent_calls: 0 }),
      ),
    ),
    "does not match the documented schema",
  );
  assert.match(
    String(check("GET", `/api/v1/users/${id}`, json(404, { message: "no" }))),
    "does not match",
  );
  const page = { data: [], total: 0, pagination: { total: 0, limit: 100, offset: 0 } };
  assert.is(check("GET", "/api/v1/webhooks", json(200, page)), null);
  assert.match(String(check("GET", "/api/v1/webhooks", json(200, []))), "does not match");
});

test("an undocumented media type fails; non-API paths are not checked", () => {
  const problem = check("GET", "/api/v1/settings", {
    status: 200,
    contentType: "text/html",
    body: "<p>",
  });
  assert.match(String(problem), "Content-Type text/html is not documented");
  assert.is(check("GET", "/health", json(200, { status: "ok" })), null);
});

test.run();
