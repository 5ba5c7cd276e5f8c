// `/outbound-routes`: CRUD with the model's fields, the trunk by name or id (must exist in the
// org), partial updates, pattern rules, deploys, the compiled dialplan and tenant isolation.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileOrg } from "../../src/compiler/index.js";
import { loadOrgState } from "../../src/store/load-org-state.js";
import { orgKey, type TestOrg } from "./dids-fixtures.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let acme: TestOrg;
let beta: TestOrg;
let trunkId: string;

test.before(async () => {
  app = await startTestApp();
  acme = await app.createOrg("Acme");
  beta = await app.createOrg("Beta");
  const trunk = await call(acme, "POST", "/trunks", { name: "carrier", host: "c.example" });
  trunkId = trunk.body.id;
  await call(beta, "POST", "/trunks", { name: "betatrunk", host: "b.example" });
});
test.after(async () => app.close());

function call(org: TestOrg, method: string, path: string, body?: unknown) {
  return app.request(method, `/api/v1${path}`, {
    headers: orgKey(org),
    ...(body !== undefined ? { body } : {}),
  });
}

test("create with defaults, by trunk name; the dialplan sends the pattern to the trunk", async () => {
  app.deploys.length = 0;
  const res = await call(acme, "POST", "/outbound-routes", {
    name: "Mobile",
    patterns: ["_9XXXXXXXXX"],
    trunk: "carrier",
    strip_digits: 1,
    prepend_digits: "+91",
  });
  assert.is(res.status, 201, res.text);
  assert.equal(
    { ...res.body, id: undefined },
    {
      id: undefined,
      name: "Mobile",
      patterns: ["_9XXXXXXXXX"],
      trunk: "carrier",
      trunk_id: trunkId,
      strip_digits: 1,
      prepend_digits: "+91",
      caller_id_override: null,
    },
  );
  assert.equal(app.deploys, [acme.id]);
  const { files } = compileOrg(await loadOrgState(app.db, acme.id));
  const dialplan = files.find((f) => f.path.endsWith("/extensions.conf"))?.content ?? "";
  assert.match(dialplan, "exten => _9XXXXXXXXX,");
});

test("the trunk may be named by id; updates are partial and patterns replace the list", async () => {
  const created = await call(acme, "POST", "/outbound-routes", {
    name: "Intl",
    patterns: ["_00X."],
    trunk: trunkId,
    caller_id_override: "+918065978001",
  });
  assert.is(created.status, 201, created.text);
  assert.is(created.body.trunk, "carrier");
  const id = created.body.id;
  const renamed = await call(acme, "PUT", `/outbound-routes/${id}`, { name: "International" });
  assert.is(renamed.body.name, "International");
  assert.equal(renamed.body.patterns, ["_00X."], "kept");
  assert.is(renamed.body.caller_id_override, "+918065978001", "kept");
  const repatterned = await call(acme, "PUT", `/outbound-routes/${id}`, {
    patterns: ["_00XX.", "_+X."],
    caller_id_override: null,
  });
  assert.equal(repatterned.body.patterns, ["_00XX.", "_+X."]);
  assert.is(repatterned.body.caller_id_override, null);
  const list = await call(acme, "GET", "/outbound-routes");
  assert.equal(
    list.body.data.map((r: { name: string }) => r.name),
    ["Mobile", "International"],
    "creation order is match order",
  );
});

test("rules: the trunk must exist in the org; patterns unique across routes; character sets", async () => {
  app.deploys.length = 0;
  expectError(
    await call(acme, "POST", "/outbound-routes", { name: "X", patterns: ["_1X."], trunk: "nope" }),
    400,
    "Trunk nope not found in this organization",
  );
  expectError(
    await call(acme, "POST", "/outbound-routes", {
      name: "X",
      patterns: ["_1X."],
      trunk: "betatrunk",
    }),
    400,
    "Trunk betatrunk not found in this organization",
  );
  expectError(
    await call(acme, "POST", "/outbound-routes", {
      name: "Dup",
      patterns: ["_9XXXXXXXXX"],
      trunk: "carrier",
    }),
    400,
    "pattern _9XXXXXXXXX is already used by outbound route 'Mobile'",
  );
  for (const body of [
    { name: "X", patterns: [], trunk: "carrier" },
    { name: "X", patterns: ["_1X.;evil"], trunk: "carrier" },
    { name: "X\n[evil]", patterns: ["_1X."], trunk: "carrier" },
    { name: "X", patterns: ["_1X."], trunk: "carrier", prepend_digits: "${SHELL(x)}" },
    { name: "X", patterns: ["_1X."], trunk: "carrier", strip_digits: -1 },
  ]) {
    const res = await call(acme, "POST", "/outbound-routes", body);
    assert.is(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
  }
  assert.equal(app.deploys, []);
});

test("tenant isolation: another org's route is 403 on every route and never listed", async () => {
  const mine = (await call(acme, "GET", "/outbound-routes")).body.data[0];
  const list = await call(beta, "GET", "/outbound-routes");
  assert.equal(list.body.data, []);
  expectError(await call(beta, "GET", `/outbound-routes/${mine.id}`), 403, "Access denied");
  expectError(
    await call(beta, "PUT", `/outbound-routes/${mine.id}`, { name: "Mine now" }),
    403,
    "Access denied",
  );
  expectError(await call(beta, "DELETE", `/outbound-routes/${mine.id}`), 403, "Access denied");
  assert.is((await call(acme, "GET", `/outbound-routes/${mine.id}`)).body.name, "Mobile");
  const missing = "00000000-0000-4000-8000-000000000000";
  expectError(
    await call(acme, "GET", `/outbound-routes/${missing}`),
    404,
    "Outbound route not found",
  );
  expectError(
    await call(acme, "DELETE", `/outbound-routes/${missing}`),
    404,
    "Outbound route not found",
  );
});

test.run();
