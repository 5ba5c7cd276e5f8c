// Every list operation pages: `limit` (at most MAX_PAGE_SIZE) and `offset`, a stable order, and
// the total both in the body (`total`, `pagination.total`) and in X-Total-Count. The lists SPEC.md
// fixes as bare arrays (`GET /ivrs`, `GET /tts/voices`) stay arrays with the header.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { MAX_PAGE_SIZE } from "../../src/api/pagination.js";
import { allRoutes } from "../../src/api/routes/index.js";
import { startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let key: Record<string, string>;
test.before(async () => {
  app = await startTestApp();
  key = { "x-api-key": (await app.createOrg()).api_key };
  for (let i = 0; i < 7; i++) {
    const res = await app.request("POST", "/api/v1/users", {
      headers: key,
      body: { extension: String(1006 - i), name: `User ${i}` },
    });
    assert.is(res.status, 201, res.text);
  }
  for (let i = 0; i < 3; i++) {
    await app.request("POST", "/api/v1/ivrs", {
      headers: key,
      body: { name: `Menu ${i}`, extension: `80${i}` },
    });
  }
});
test.after(async () => app.close());

const extensions = (rows: Array<{ extension: string }>) => rows.map((r) => r.extension);

test("pages of GET /users: stable order, total in the body and in X-Total-Count", async () => {
  const first = await app.request("GET", "/api/v1/users?limit=3", { headers: key });
  assert.is(first.status, 200, first.text);
  assert.equal(extensions(first.body.data), ["1000", "1001", "1002"]);
  assert.is(first.body.total, 7);
  assert.equal(first.body.pagination, { total: 7, limit: 3, offset: 0 });
  assert.is(first.headers.get("x-total-count"), "7");
  const last = await app.request("GET", "/api/v1/users?limit=3&offset=6", { headers: key });
  assert.equal(extensions(last.body.data), ["1006"]);
  const past = await app.request("GET", "/api/v1/users?offset=50", { headers: key });
  assert.equal(past.body.data, []);
  assert.is(past.body.total, 7);
  const all = await app.request("GET", "/api/v1/users", { headers: key });
  assert.is(all.body.pagination.limit, 100, "the default page size");
  assert.is(all.body.data.length, 7);
});

test("limit above the documented maximum, zero or negative offset is a 400", async () => {
  for (const query of [`limit=${MAX_PAGE_SIZE + 1}`, "limit=0", "offset=-1", "limit=abc"]) {
    const res = await app.request("GET", `/api/v1/users?${query}`, { headers: key });
    assert.is(res.status, 400, `${query}: ${res.text}`);
  }
  const max = await app.request("GET", `/api/v1/users?limit=${MAX_PAGE_SIZE}`, { headers: key });
  assert.is(max.status, 200);
});

test("GET /ivrs stays SPEC's bare array; its total is in X-Total-Count", async () => {
  const res = await app.request("GET", "/api/v1/ivrs?limit=2&offset=1", { headers: key });
  assert.ok(Array.isArray(res.body));
  assert.equal(
    res.body.map((ivr: { extension: string }) => ivr.extension),
    ["801", "802"],
  );
  assert.is(res.headers.get("x-total-count"), "3");
});

test("every list operation of the document takes limit and offset", () => {
  const lists = allRoutes.filter((r) => r.list);
  assert.ok(lists.length >= 19, `${lists.length} list routes`);
  for (const route of lists) {
    const names = Object.keys((route.query as { properties: object }).properties);
    assert.ok(names.includes("limit") && names.includes("offset"), route.path);
  }
  // A GET whose 200 is an array and that is not marked as a list would escape paging.
  const unpaged = allRoutes.filter(
    (r) =>
      r.method === "get" &&
      !r.list &&
      (r.responses[200]?.schema as { type?: string } | undefined)?.type === "array",
  );
  assert.equal(
    unpaged.map((r) => r.path),
    [],
  );
});

test("an unchanged listing's page is the bytes kept from before; a change is answered at once", async () => {
  const first = await app.request("GET", "/api/v1/users?limit=2&offset=1", { headers: key });
  const again = await app.request("GET", "/api/v1/users?limit=2&offset=1", { headers: key });
  assert.is(again.text, first.text);
  assert.is(again.headers.get("content-type"), "application/json; charset=utf-8");
  assert.is(again.headers.get("content-length"), String(Buffer.byteLength(first.text)));
  assert.is(again.headers.get("x-total-count"), "7");
  // Another window of the same listing is its own page, not the one kept.
  const other = await app.request("GET", "/api/v1/users?limit=1", { headers: key });
  assert.equal(extensions(other.body.data), ["1000"]);
  assert.equal(other.body.pagination, { total: 7, limit: 1, offset: 0 });

  const added = await app.request("POST", "/api/v1/users", {
    headers: key,
    body: { extension: "0999", name: "Newest" },
  });
  assert.is(added.status, 201, added.text);
  const changed = await app.request("GET", "/api/v1/users?limit=2&offset=1", { headers: key });
  assert.equal(extensions(changed.body.data), ["1000", "1001"]);
  assert.is(changed.body.total, 8);
  assert.is(changed.headers.get("x-total-count"), "8");
});

test.run();
