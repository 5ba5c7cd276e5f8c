// The HTTP platform: error bodies, body limits, validation messages, /health, headers.
import { Type } from "@sinclair/typebox";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { defineRoute } from "../../src/api/registry.js";
import { allRoutes } from "../../src/api/routes/index.js";
import { storeChangeFeed } from "../../src/store/database-postgres.js";
import { testBackend } from "../store/test-database.js";
import { bearer, expectError, startTestApp, type TestApp } from "./helpers.js";

const crashRoute = defineRoute({
  method: "get",
  path: "/test-crash",
  tag: "Settings",
  summary: "throws a bug",
  auth: "public",
  responses: { 200: { description: "never" } },
  handler: () => {
    throw new Error("secret internals: db password is hunter2");
  },
});

const echoRoute = defineRoute({
  method: "post",
  path: "/test-echo/{n}",
  tag: "Settings",
  summary: "validates params, query and body",
  auth: "public",
  params: Type.Object({ n: Type.Integer({ minimum: 1 }) }),
  query: Type.Object({ mode: Type.Optional(Type.Union([Type.Literal("a"), Type.Literal("b")])) }),
  body: Type.Object(
    { name: Type.String({ minLength: 1 }), count: Type.Integer({ default: 3 }) },
    { additionalProperties: false },
  ),
  responses: { 200: { description: "echo" } },
  handler: ({ params, query, body }) => ({ params, query, body }),
});

let app: TestApp;
test.before(async () => {
  app = await startTestApp({
    routes: [...allRoutes, crashRoute, echoRoute],
    env: { PBX_BODY_LIMIT: "2kb" },
  });
});
test.after(async () => app.close());

test("GET /health reports store and engine without auth", async () => {
  await storeChangeFeed(app.db)?.whenFollowing();
  const res = await app.request("GET", "/health");
  assert.is(res.status, 200);
  assert.equal(res.body, {
    status: "ok",
    store: "ok",
    engine: "files-only",
    database: testBackend(),
    // PostgreSQL only: whether this replica's cached reads follow the change feed.
    ...(testBackend() === "postgres" ? { change_feed: "following" } : {}),
  });
});

test("an unexpected error is a bare 500 with a request id, no internals", async () => {
  const res = await app.request("GET", "/api/v1/test-crash");
  assert.is(res.status, 500);
  assert.is(res.body.error, "Internal server error");
  assert.match(res.body.request_id, /^[0-9a-f-]{36}$/);
  assert.is(res.headers.get("x-request-id"), res.body.request_id);
  assert.not.ok(res.text.includes("hunter2"));
});

test("malformed JSON is 400, an oversized body 413", async () => {
  const token = await app.adminToken();
  expectError(
    await app.request("POST", "/api/v1/organizations", {
      headers: bearer(token),
      rawBody: '{"name": "x",',
    }),
    400,
    "Malformed JSON body",
  );
  expectError(
    await app.request("POST", "/api/v1/organizations", {
      headers: bearer(token),
      body: { name: "x".repeat(5000) },
    }),
    413,
    "Request body too large",
  );
});

test("validation failures are 400 with messages naming the field", async () => {
  const post = (path: string, body: unknown) => app.request("POST", path, { body });
  expectError(await post("/api/v1/test-echo/1", {}), 400, "name is required");
  expectError(
    await post("/api/v1/test-echo/1", { name: "a", extra: 1 }),
    400,
    "Unknown field: extra",
  );
  expectError(await post("/api/v1/test-echo/1", { name: 5 }), 400, "name must be string");
  expectError(await post("/api/v1/test-echo/0", { name: "a" }), 400, "n must be >= 1");
  expectError(
    await post("/api/v1/test-echo/1?mode=c", { name: "a" }),
    400,
    "mode must be one of: a, b",
  );
  const ok = await post("/api/v1/test-echo/7?mode=b", { name: "a" });
  assert.equal(ok.body, { params: { n: 7 }, query: { mode: "b" }, body: { name: "a", count: 3 } });
});

test("unknown paths are 404 and wrong methods 405, both as {error}", async () => {
  expectError(await app.request("GET", "/api/v1/nothing-here"), 404, "Not found");
  expectError(await app.request("PATCH", "/api/v1/organizations"), 405, "Method not allowed");
});

test("security headers are set on API answers", async () => {
  const res = await app.request("GET", "/health");
  assert.is(res.headers.get("x-content-type-options"), "nosniff");
  assert.is(res.headers.get("x-frame-options"), "DENY");
  assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'/);
});

test.run();
