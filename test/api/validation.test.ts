// Route validators compile on first use (start-up time, docs/performance.md); these tests keep
// what compiling them all at start-up guaranteed: a schema ajv refuses fails here, not on a
// request.
import { Type } from "@sinclair/typebox";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { allRoutes } from "../../src/api/routes/index.js";
import { compileValidator, validatorOnFirstUse } from "../../src/api/validation.js";

test("every route's params, query and body schema compiles", () => {
  let compiled = 0;
  for (const route of allRoutes) {
    for (const source of ["params", "query", "body"] as const) {
      const schema = route[source];
      if (!schema) continue;
      assert.type(compileValidator(schema, source), "function", `${route.method} ${route.path}`);
      compiled++;
    }
  }
  assert.ok(compiled > 100, `only ${compiled} schemas found`);
});

test("a validator compiled on first use answers and reports like ajv's own", () => {
  const schema = Type.Object({ limit: Type.Integer({ minimum: 1 }) });
  const lazy = validatorOnFirstUse(schema, "query");
  assert.is(lazy.errors, undefined);
  const coerced: Record<string, unknown> = { limit: "5" };
  assert.ok(lazy(coerced));
  assert.is(coerced.limit, 5);
  assert.is(lazy.errors, null);
  assert.not.ok(lazy({ limit: "0" }));
  assert.is(lazy.errors?.[0]?.keyword, "minimum");
  assert.is(lazy.errors?.[0]?.instancePath, "/limit");
});

test.run();
