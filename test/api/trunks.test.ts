// `/trunks`: CRUD with the model's fields and defaults, the write-only password (stored for the
// compiler, never answered), partial updates, unique names, deletion guarded by outbound routes,
// deploys and tenant isolation.
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

const call = (org: TestOrg, method: string, path: string, body?: unknown) =>
  app.request(method, `/api/v1${path}`, {
    headers: orgKey(org),
    ...(body !== undefined ? { body } : {}),
  });

test("create with defaults; the password is stored for pjsip but never answered", async () => {
  app.deploys.length = 0;
  const res = await call(acme, "POST", "/trunks", {
    name: "carrier1",
    host: "sip.carrier.example",
    username: "acct42",
    password: "s3cret!pw",
    registration: true,
  });
  assert.is(res.status, 201, res.text);
  assert.equal(
    { ...res.body, id: undefined },
    {
      id: undefined,
      name: "carrier1",
      host: "sip.carrier.example",
      port: 5060,
      transport: "udp",
      username: "acct42",
      has_password: true,
      registration: true,
      codecs: ["ulaw", "alaw"],
      match: [],
    },
  );
  assert.not.ok(res.text.includes("s3cret"), "never in an answer");
  assert.equal(app.deploys, [acme.id]);
  const list = await call(acme, "GET", "/trunks");
  assert.not.ok(list.text.includes("s3cret"));
  const one = await call(acme, "GET", `/trunks/${res.body.id}`);
  assert.not.ok(one.text.includes("s3cret"));
  assert.is(one.body.has_password, true);

  const { files } = compileOrg(await loadOrgState(app.db, acme.id));
  const pjsip = files.find((f) => f.path.endsWith("/pjsip.conf"))?.content ?? "";
  assert.match(pjsip, "password=s3cret!pw", "the compiler can read it");
  assert.match(pjsip, "type=registration");
});

test("updates are partial; an omitted password is kept, null removes it", async () => {
  const created = await call(acme, "POST", "/trunks", {
    name: "carrier2",
    host: "10.0.0.1",
    username: "u",
    password: "pw-one",
    codecs: ["alaw"],
    match: ["10.0.0.0/24"],
  });
  const id = created.body.id;
  app.deploys.length = 0;
  const moved = await call(acme, "PUT", `/trunks/${id}`, { port: 5080, transport: "tcp" });
  assert.is(moved.status, 200, moved.text);
  assert.is(moved.body.port, 5080);
  assert.is(moved.body.transport, "tcp");
  assert.equal(moved.body.codecs, ["alaw"], "kept");
  assert.equal(moved.body.match, ["10.0.0.0/24"], "kept");
  assert.is(moved.body.has_password, true, "kept");
  assert.equal(app.deploys, [acme.id]);
  let state = await loadOrgState(app.db, acme.id);
  assert.is(state.trunks.find((t) => t.id === id)?.password, "pw-one");
  const cleared = await call(acme, "PUT", `/trunks/${id}`, { password: null });
  assert.is(cleared.body.has_password, false);
  assert.is(cleared.body.transport, "tcp", "an omitted transport is kept, not reset to udp");
  state = await loadOrgState(app.db, acme.id);
  assert.is(state.trunks.find((t) => t.id === id)?.password, undefined);
});

test("rules: unique name (409), registration needs a username, schema character sets", async () => {
  expectError(
    await call(acme, "POST", "/trunks", { name: "carrier1", host: "h.example" }),
    409,
    "Trunk 'carrier1' already exists",
  );
  expectError(
    await call(acme, "POST", "/trunks", { name: "reg", host: "h.example", registration: true }),
    400,
    "registration needs a username",
  );
  const bad = [
    { name: "Bad Name", host: "h.example" },
    { name: "ok", host: "h.example\n[evil]" },
    { name: "ok", host: "h.example", password: "has space" },
    { name: "ok", host: "h.example", password: "x".repeat(129) },
    { name: "ok", host: "h.example", password: "" },
    { name: "ok", host: "h.example", codecs: ["mp3"] },
    { name: "ok", host: "h.example", port: 70000 },
    { name: "ok" },
  ];
  for (const body of bad) {
    const res = await call(acme, "POST", "/trunks", body);
    assert.is(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
    assert.type(res.body.error, "string");
  }
  expectError(await call(acme, "POST", "/trunks", { name: "ok" }), 400, "host is required");
});

test("an address or range another org's trunk matches is 409, without naming that org", async () => {
  const held = await call(beta, "POST", "/trunks", {
    name: "beta-carrier",
    host: "sip.beta-carrier.example",
    registration: true,
    username: "beta",
    match: ["203.0.113.0/28", "2001:db8::/64"],
  });
  assert.is(held.status, 201, held.text);
  const refused = [
    // An address inside the range, a range around it, the same IPv6 network written longer.
    [
      {
        name: "claim1",
        host: "sip.other.example",
        registration: true,
        username: "a",
        match: ["203.0.113.10"],
      },
      "203.0.113.10",
    ],
    [{ name: "claim2", host: "203.0.113.0" }, "203.0.113.0"],
    [
      {
        name: "claim3",
        host: "sip.other.example",
        registration: true,
        username: "a",
        match: ["203.0.112.0/23"],
      },
      "203.0.112.0/23",
    ],
    [{ name: "claim4", host: "[2001:db8:0:0::5]" }, "[2001:db8:0:0::5]"],
  ] as const;
  for (const [body, entry] of refused) {
    const res = await call(acme, "POST", "/trunks", body);
    expectError(res, 409, `${entry} is already matched by another organization's trunk`);
    assert.not.match(res.text, "Beta");
  }
  // Next to the range is free; so is a host name that registers (identified by its line).
  const beside = await call(acme, "POST", "/trunks", {
    name: "beside",
    host: "203.0.113.16",
    match: ["203.0.113.17"],
  });
  assert.is(beside.status, 201, beside.text);
  expectError(
    await call(acme, "PUT", `/trunks/${beside.body.id}`, { match: ["203.0.113.15"] }),
    409,
    "203.0.113.15 is already matched by another organization's trunk",
  );
  const listed = await call(acme, "GET", `/trunks/${beside.body.id}`);
  assert.equal(listed.body.match, ["203.0.113.17"], "the refused update changed nothing");
  await call(acme, "DELETE", `/trunks/${beside.body.id}`);
  await call(beta, "DELETE", `/trunks/${held.body.id}`);
});

test("a trunk used by a route cannot be deleted: 409 names the route", async () => {
  const trunk = (await call(acme, "POST", "/trunks", { name: "busy", host: "b.example" })).body;
  const route = await call(acme, "POST", "/outbound-routes", {
    name: "National",
    patterns: ["_0XXXXXXXXXX"],
    trunk: "busy",
  });
  assert.is(route.status, 201, route.text);
  expectError(
    await call(acme, "DELETE", `/trunks/${trunk.id}`),
    409,
    "Trunk 'busy' is used by outbound route 'National'",
  );
  assert.is((await call(acme, "DELETE", `/outbound-routes/${route.body.id}`)).status, 204);
  app.deploys.length = 0;
  assert.is((await call(acme, "DELETE", `/trunks/${trunk.id}`)).status, 204);
  assert.equal(app.deploys, [acme.id]);
  expectError(await call(acme, "GET", `/trunks/${trunk.id}`), 404, "Trunk not found");
});

test("tenant isolation: another org's trunk is 403 on every route and never listed", async () => {
  const mine = (await call(acme, "POST", "/trunks", { name: "private", host: "p.example" })).body;
  const list = await call(beta, "GET", "/trunks");
  assert.is(list.status, 200);
  assert.ok(!list.text.includes(mine.id));
  app.deploys.length = 0;
  expectError(await call(beta, "GET", `/trunks/${mine.id}`), 403, "Access denied");
  expectError(await call(beta, "PUT", `/trunks/${mine.id}`, { port: 1 }), 403, "Access denied");
  expectError(await call(beta, "DELETE", `/trunks/${mine.id}`), 403, "Access denied");
  assert.equal(app.deploys, []);
  assert.is((await call(acme, "GET", `/trunks/${mine.id}`)).body.port, 5060);
  const missing = "00000000-0000-4000-8000-000000000000";
  expectError(await call(acme, "PUT", `/trunks/${missing}`, { port: 1 }), 404, "Trunk not found");
  expectError(await call(acme, "DELETE", `/trunks/${missing}`), 404, "Trunk not found");
});

test.run();
