// Messages in words, not regexes (issue 19, defect 5): every pattern a schema of the model or of
// an API route declares has a rule in plain words, so no user ever reads `must match pattern ^...`.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { allRoutes } from "../../src/api/routes/index.js";
import { loadOrgSource } from "../../src/model/files.js";
import { GatewayStateSchema } from "../../src/model/org-state.js";
import { OrgFileSchema, patternMessage } from "../../src/model/schema-check.js";

function patternsOf(schema: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) patternsOf(item, found);
  else if (schema && typeof schema === "object") {
    for (const [key, value] of Object.entries(schema)) {
      if (key === "pattern" && typeof value === "string") found.add(value);
      else patternsOf(value, found);
    }
  }
  return found;
}

test("every pattern of the model and of every API route has a rule in words", () => {
  const schemas: unknown[] = [OrgFileSchema, GatewayStateSchema];
  for (const route of allRoutes) schemas.push(route.params, route.query, route.body);
  const missing = [...patternsOf(schemas)].filter((pattern) => !patternMessage(pattern));
  assert.equal(missing, []);
});

test("a trunk password with a space says printable ASCII, not the regex", () => {
  const text = [
    "org:",
    "  id: 11111111-2222-4333-8444-555555555555",
    "  name: Acme",
    "trunks:",
    "  - { name: carrier, host: sip.example.net, password: 'has space' }",
    "",
  ].join("\n");
  const { diagnostics } = loadOrgSource({ file: "acme.yaml", text }, {});
  const password = diagnostics.find((d) => d.path === "trunks[0].password");
  assert.is(password?.message, "must be printable ASCII, no spaces");
});

test.run();
