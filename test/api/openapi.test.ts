// The OpenAPI document: valid 3.0.3, generated from the route definitions, with the tags,
// servers and security of SPEC.md §1.
import SwaggerParser from "@apidevtools/swagger-parser";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildOpenApiDocument } from "../../src/api/openapi.js";
import { allRoutes } from "../../src/api/routes/index.js";
import { TAGS } from "../../src/api/tags.js";
import { startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
// biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON
let doc: any;
test.before(async () => {
  app = await startTestApp();
  const res = await app.request("GET", "/api-spec.json");
  assert.is(res.status, 200);
  doc = res.body;
});
test.after(async () => app.close());

const operations = () =>
  // biome-ignore lint/suspicious/noExplicitAny: plain JSON
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );

test("/api-spec.json passes swagger-parser validation as OpenAPI 3.0.3", async () => {
  assert.is(doc.openapi, "3.0.3");
  await SwaggerParser.validate(structuredClone(doc));
});

test("servers: /api/v1 first, {PBX_BASE_URL}/api/v1 second", () => {
  assert.equal(
    doc.servers.map((s: { url: string }) => s.url),
    ["/api/v1", "https://pbx.example.test/api/v1"],
  );
});

test("23 tags: SPEC's in its order, then its further groups and time conditions, each with a description", () => {
  assert.is(doc.tags.length, 23);
  assert.is(doc.tags[22].name, "Time Conditions");
  assert.equal(
    doc.tags.slice(0, 19).map((t: { name: string }) => t.name),
    [
      "Authentication",
      "Organization Management",
      "SIP Trunks",
      "DID Numbers",
      "Users",
      "Queues",
      "Greetings",
      "Music on Hold",
      "IVR",
      "Outbound Routes",
      "Call Management",
      "Webhooks",
      "Configuration Management",
      "CRM",
      "API Keys",
      "Ticket Alerts",
      "WhatsApp Admin",
      "DID Pool",
      "Customer Tunnels",
    ],
  );
  for (const tag of doc.tags) assert.ok(tag.description, tag.name);
});

test("every registered route is one operation; nothing else is in the document", () => {
  const ops = operations()
    .map(({ path, method }) => `${method} ${path}`)
    .sort();
  const routes = allRoutes
    .filter((r) => !r.aliasOf)
    .map((r) => `${r.method} ${r.path}`)
    .sort();
  assert.equal(ops, routes);
  // An alias is a second path of a documented operation (SPEC.md names it), never a new one.
  for (const alias of allRoutes.filter((r) => r.aliasOf)) {
    assert.ok(doc.paths[alias.aliasOf!]?.[alias.method], `${alias.path} -> ${alias.aliasOf}`);
  }
  const ids = operations().map(({ op }) => op.operationId);
  assert.is(new Set(ids).size, ids.length, "operationIds are unique");
});

test("security: [apiKey, bearer] on org operations, bearer on admin ones, none on public ones", () => {
  for (const { path, method, op } of operations()) {
    const route = allRoutes.find((r) => r.path === path && r.method === method)!;
    const schemes = op.security.map((s: object) => Object.keys(s)[0]);
    if (route.authKinds.includes("org"))
      assert.equal(schemes, ["apiKey", "bearer"], `${method} ${path}`);
    else if (route.authKinds.includes("public")) assert.equal(schemes, [], `${method} ${path}`);
    else if (route.authKinds.includes("admin"))
      assert.is(schemes[0], "bearer", `${method} ${path}`);
  }
});

test("every operation has a tag from the list, a summary, a success and error responses", () => {
  const names = new Set(TAGS.map((t) => t.name));
  for (const { path, method, op } of operations()) {
    const where = `${method} ${path}`;
    assert.ok(names.has(op.tags[0]), where);
    assert.ok(op.summary, where);
    const statuses = Object.keys(op.responses);
    assert.ok(
      statuses.some((s) => s.startsWith("2")),
      where,
    );
    assert.ok(statuses.includes("500"), where);
    if (!op.security.length) continue;
    assert.ok(statuses.includes("401") && statuses.includes("403"), where);
  }
});

test("request schemas in the document are the validating ones (OpenAPI 3.0 dialect)", () => {
  const create = doc.paths["/api-keys"].post.requestBody.content["application/json"].schema;
  // SPEC.md §2's 14, plus tickets.read and tickets.write (docs/tickets.md).
  assert.is(create.properties.permissions.items.enum.length, 16);
  assert.equal(create.required, ["name"]);
  const login = doc.paths["/auth/login"].post;
  assert.equal(login.security, []);
  const text = JSON.stringify(doc);
  assert.not.ok(text.includes('"const"'), "3.0 has no const");
  assert.not.ok(text.includes('"type":"null"'), "3.0 has no null type");
});

test("every patterned string of every request body has a realistic example its pattern accepts", () => {
  const missing: string[] = [];
  let checked = 0;
  // biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON
  const walk = (schema: any, where: string) => {
    if (!schema || typeof schema !== "object") return;
    if (schema.type === "string" && typeof schema.pattern === "string") {
      checked++;
      if (typeof schema.example !== "string") missing.push(`${where}: no example`);
      else if (!new RegExp(schema.pattern, "u").test(schema.example)) {
        missing.push(`${where}: ${schema.example} does not match ${schema.pattern}`);
      }
    }
    for (const [key, sub] of Object.entries(schema.properties ?? {})) walk(sub, `${where}.${key}`);
    walk(schema.items, `${where}[]`);
    for (const combiner of ["anyOf", "oneOf", "allOf"]) {
      for (const branch of schema[combiner] ?? []) walk(branch, where);
    }
  };
  for (const [path, operations] of Object.entries(doc.paths)) {
    // biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON
    for (const [method, op] of Object.entries(operations as Record<string, any>)) {
      walk(op.requestBody?.content?.["application/json"]?.schema, `${method} ${path}`);
    }
  }
  assert.ok(checked > 100, `walked the bodies (${checked} patterned strings)`);
  assert.equal(missing, [], "add a candidate to EXAMPLES_BY_NAME (src/api/request-examples.ts)");
  const user = doc.paths["/users"].post.requestBody.content["application/json"].schema;
  assert.is(user.properties.extension.example, "1001");
  assert.is(user.properties.name.example, "Sales");
});

test("what generators and linters need: descriptions, nullable with a type, upload media types", () => {
  for (const { path, method, op } of operations()) {
    assert.ok(op.description, `${method} ${path} has a description`);
  }
  assert.ok(doc.info.contact?.name && doc.info.license?.name);
  // `nullable` only ever sits beside a `type` (Redocly's nullable-type-sibling).
  const walk = (node: unknown, at: string): void => {
    if (typeof node !== "object" || node === null) return;
    const record = node as Record<string, unknown>;
    if (record.nullable === true) assert.ok(record.type, `${at}: nullable without type`);
    for (const [key, value] of Object.entries(record)) walk(value, `${at}/${key}`);
  };
  walk(doc.paths, "#/paths");
  for (const path of ["/greetings", "/music-on-hold"]) {
    const body = doc.paths[path].post.requestBody;
    assert.ok(body?.content?.["audio/wav"], `${path} declares audio/wav`);
  }
  // The pool's admin update is documented at SPEC.md §4.2's path, so generated clients can call
  // it (issue 28 item 4); the older `/did-pool/admin/dids/{id}` still answers, undocumented.
  assert.ok(doc.paths["/did-pool/admin/{id}"]?.put, "PUT /did-pool/admin/{id} is documented");
  assert.not.ok(doc.paths["/did-pool/admin/dids/{id}"]);
  // Every body-taking operation documents the body parser's answers.
  for (const { path, method, op } of operations()) {
    if (method === "get") continue;
    for (const status of ["400", "413", "415"]) {
      assert.ok(op.responses[status], `${method} ${path} documents ${status}`);
    }
  }
});

test("a route added to the list appears in the document without any other edit", () => {
  const extra = buildOpenApiDocument(
    [...allRoutes, { ...allRoutes[0]!, path: "/extra/{thing}", method: "get" }],
    { baseUrl: "http://x", version: "0" },
  ) as { paths: Record<string, Record<string, unknown>> };
  assert.ok(extra.paths["/extra/{thing}"]?.get);
});

test.run();
