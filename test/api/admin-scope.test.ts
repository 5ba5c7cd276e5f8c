// Admin tokens (issue 19, defect 7): the documented scope and what routes accept are one rule.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ADMIN_SCOPE_TEXT, inAdminScope } from "../../src/api/admin-scope.js";
import { defineRoute } from "../../src/api/registry.js";
import { allRoutes } from "../../src/api/routes/index.js";
import { ROOT } from "../cli/run-command.js";

test("every route accepting an admin token is inside the documented scope", () => {
  const admin = allRoutes.filter((route) => route.authKinds.includes("admin"));
  assert.ok(admin.some((route) => route.path === "/organizations"));
  assert.ok(admin.some((route) => route.path.startsWith("/did-pool/admin")));
  for (const route of admin) assert.ok(inAdminScope(route.method, route.path), route.path);
  // Org endpoints never accept one.
  for (const route of allRoutes.filter((r) => !inAdminScope(r.method, r.path))) {
    assert.not.ok(route.authKinds.includes("admin"), route.path);
  }
});

test("a route accepting admin tokens outside the scope is refused when defined", () => {
  assert.throws(
    () =>
      defineRoute({
        method: "get",
        path: "/users",
        tag: "Users",
        summary: "x",
        auth: "admin",
        responses: { 200: { description: "x" } },
        handler: () => null,
      }),
    /accepts admin tokens outside/,
  );
});

test("docs/api.md states the same scope", () => {
  const docs = readFileSync(join(ROOT, "docs/api.md"), "utf8").replace(/\s+/g, " ");
  assert.match(docs, ADMIN_SCOPE_TEXT);
});

test.run();
