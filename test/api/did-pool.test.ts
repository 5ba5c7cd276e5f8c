// The DID pool end to end (SPEC.md §3): admin adds -> org requests -> admin approves -> the
// org's first DID is its default -> set-default moves it in one transaction, also under
// concurrency; rejection, admin updates, the reserved sentinel, roles and tenant isolation.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { ADMIN_TOKEN_REFUSAL } from "../../src/api/admin-scope.js";
import { createDidRepository } from "../../src/store/did-repository.js";
import { addToPool, adminHeaders, assignFromPool, orgKey, type TestOrg } from "./dids-fixtures.js";
import { bearer, expectError, startTestApp, type TestApp } from "./helpers.js";
import { startIdentityProvider, type TestIdentityProvider } from "./identity-provider.js";

let idp: TestIdentityProvider;
let app: TestApp;
let acme: TestOrg;
let beta: TestOrg;

test.before(async () => {
  idp = await startIdentityProvider();
  app = await startTestApp({ env: idp.env });
  acme = await app.createOrg("Acme");
  beta = await app.createOrg("Beta");
});
test.after(async () => {
  await app.close();
  await idp.close();
});

async function defaultsOf(orgId: string): Promise<string[]> {
  const rows = await createDidRepository(app.db).listRecordsByOrg(orgId);
  return rows.filter((r) => r.is_default).map((r) => r.number);
}

test("pool flow: add, see available, request, approve; the first DID becomes the default", async () => {
  const admin = await adminHeaders(app);
  const added = await addToPool(app, "+918065978001");
  assert.is(added.pool_status, "available");
  assert.is((added as unknown as { org_id: null }).org_id, null);

  const available = await app.request("GET", "/api/v1/did-pool/available", {
    headers: orgKey(acme),
  });
  assert.equal(
    available.body.data.map((d: { id: string }) => d.id),
    [added.id],
  );

  app.deploys.length = 0;
  const requested = await app.request("POST", `/api/v1/did-pool/${added.id}/request`, {
    headers: orgKey(acme),
  });
  assert.is(requested.status, 201, requested.text);
  assert.is(requested.body.status, "pending");
  assert.is(requested.body.number, "+918065978001");
  assert.is(requested.body.org_id, acme.id);
  assert.equal(app.deploys, [], "a request changes no configuration");
  // The number is pending: no longer offered, and nobody else can ask for it.
  const after = await app.request("GET", "/api/v1/did-pool/available", { headers: orgKey(beta) });
  assert.equal(after.body.data, []);
  expectError(
    await app.request("POST", `/api/v1/did-pool/${added.id}/request`, { headers: orgKey(beta) }),
    409,
    // The number stays unnamed: beta must not learn which numbers another org holds.
    "DID is not available",
  );

  const pending = await app.request("GET", "/api/v1/did-pool/admin/requests?status=pending", {
    headers: admin,
  });
  assert.equal(
    pending.body.data.map((r: { id: string }) => r.id),
    [requested.body.id],
  );
  const own = await app.request("GET", "/api/v1/did-pool/requests", { headers: orgKey(beta) });
  assert.equal(own.body.data, [], "an org sees only its own requests");

  const approved = await app.request(
    "POST",
    `/api/v1/did-pool/admin/requests/${requested.body.id}/approve`,
    { headers: admin },
  );
  assert.is(approved.status, 200, approved.text);
  assert.is(approved.body.status, "approved");
  assert.ok(approved.body.decided_at);
  assert.equal(app.deploys, [acme.id], "approval deploys the org (and so the gateway)");

  const dids = await app.request("GET", "/api/v1/dids", { headers: orgKey(acme) });
  assert.is(dids.body.data.length, 1);
  assert.is(dids.body.data[0].pool_status, "assigned");
  assert.is(dids.body.data[0].is_default, true, "first DID of the org is its default");
  expectError(
    await app.request("POST", `/api/v1/did-pool/admin/requests/${requested.body.id}/approve`, {
      headers: admin,
    }),
    409,
    "DID request is already approved",
  );
});

test("a second approved DID is not default; set-default moves it and clears the other", async () => {
  const second = await addToPool(app, "+918065978002");
  await assignFromPool(app, acme, second.id);
  assert.equal(await defaultsOf(acme.id), ["+918065978001"]);
  app.deploys.length = 0;
  const res = await app.request("POST", `/api/v1/did-pool/${second.id}/set-default`, {
    headers: orgKey(acme),
  });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.is_default, true);
  assert.equal(await defaultsOf(acme.id), ["+918065978002"]);
  assert.equal(app.deploys, [acme.id], "config regenerated");
});

test("concurrent set-defaults leave exactly one default", async () => {
  const numbers = ["+918065978003", "+918065978004", "+918065978005", "+918065978006"];
  const ids: string[] = [];
  for (const n of numbers) {
    const did = await addToPool(app, n);
    await assignFromPool(app, acme, did.id);
    ids.push(did.id);
  }
  const results = await Promise.all(
    [...ids, ...ids].map((id) =>
      app.request("POST", `/api/v1/did-pool/${id}/set-default`, { headers: orgKey(acme) }),
    ),
  );
  assert.ok(
    results.every((r) => r.status === 200),
    results.map((r) => r.text).join("\n"),
  );
  const defaults = await defaultsOf(acme.id);
  assert.is(defaults.length, 1);
  assert.ok(numbers.includes(defaults[0]!));
});

test("the database itself refuses a second default in an org", async () => {
  const repo = createDidRepository(app.db);
  const rows = await repo.listRecordsByOrg(acme.id);
  const notDefault = rows.find((r) => !r.is_default)!;
  let refused = false;
  try {
    await repo.update(notDefault.id, { is_default: 1 }, new Date().toISOString());
  } catch {
    refused = true;
  }
  assert.ok(refused, "partial unique index dids_one_default_per_org");
});

test("two orgs requesting one number at once: exactly one request is created", async () => {
  const did = await addToPool(app, "+918065978029");
  const results = await Promise.all(
    [acme, beta, acme, beta].map((org) =>
      app.request("POST", `/api/v1/did-pool/${did.id}/request`, { headers: orgKey(org) }),
    ),
  );
  assert.equal(
    results.map((r) => r.status).sort(),
    [201, 409, 409, 409],
    results.map((r) => r.text).join("\n"),
  );
  const pending = await app.request("GET", "/api/v1/did-pool/admin/requests?status=pending", {
    headers: await adminHeaders(app),
  });
  assert.is(pending.body.data.filter((r: { did_id: string }) => r.did_id === did.id).length, 1);
  const winner = pending.body.data.find((r: { did_id: string }) => r.did_id === did.id);
  await app.request("POST", `/api/v1/did-pool/admin/requests/${winner.id}/reject`, {
    headers: await adminHeaders(app),
  });
});

test("rejection returns the number to the pool", async () => {
  const did = await addToPool(app, "+918065978007");
  const requested = await app.request("POST", `/api/v1/did-pool/${did.id}/request`, {
    headers: orgKey(beta),
  });
  app.deploys.length = 0;
  const rejected = await app.request(
    "POST",
    `/api/v1/did-pool/admin/requests/${requested.body.id}/reject`,
    { headers: await adminHeaders(app) },
  );
  assert.is(rejected.status, 200, rejected.text);
  assert.is(rejected.body.status, "rejected");
  assert.equal(app.deploys, []);
  const available = await app.request("GET", "/api/v1/did-pool/available", {
    headers: orgKey(beta),
  });
  assert.ok(available.body.data.some((d: { id: string }) => d.id === did.id));
  const beta_dids = await app.request("GET", "/api/v1/dids", { headers: orgKey(beta) });
  assert.equal(beta_dids.body.data, []);
  expectError(
    await app.request("POST", `/api/v1/did-pool/admin/requests/${requested.body.id}/approve`, {
      headers: await adminHeaders(app),
    }),
    409,
    "DID request is already rejected",
  );
});

test("the sentinel enters the pool reserved and can never be requested", async () => {
  const sentinel = await addToPool(app, "+918065978000");
  assert.is(sentinel.pool_status, "reserved");
  expectError(
    await app.request("POST", `/api/v1/did-pool/${sentinel.id}/request`, {
      headers: orgKey(acme),
    }),
    409,
    "DID is not available",
  );
  expectError(
    await app.request("PUT", `/api/v1/did-pool/admin/${sentinel.id}`, {
      headers: await adminHeaders(app),
      body: { pool_status: "available" },
    }),
    400,
    "+918065978000 is the reserved sentinel number and cannot belong to an org; it stays reserved",
  );
});

test("admin update: routing_environment of an assigned DID deploys its org", async () => {
  const did = await addToPool(app, "+918065978008");
  await assignFromPool(app, beta, did.id);
  app.deploys.length = 0;
  const res = await app.request("PUT", `/api/v1/did-pool/admin/${did.id}`, {
    headers: await adminHeaders(app),
    body: { routing_environment: "staging" },
  });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.routing_environment, "staging");
  assert.is(res.body.pool_status, "assigned", "partial: other fields kept");
  assert.equal(app.deploys, [beta.id]);
  expectError(
    await app.request("PUT", `/api/v1/did-pool/admin/${did.id}`, {
      headers: await adminHeaders(app),
      body: { routing_environment: "mars" },
    }),
    400,
    "routing_environment must be one of: prod, staging, oss",
  );
  expectError(
    await app.request("PUT", `/api/v1/did-pool/admin/${did.id}`, {
      headers: await adminHeaders(app),
      body: { pool_status: "reserved" },
    }),
    409,
    "DID +918065978008 is assigned; only unassigned numbers move between available and reserved",
  );
});

test("admin endpoints refuse org credentials; org endpoints refuse admin tokens", async () => {
  expectError(
    await app.request("POST", "/api/v1/did-pool/admin", {
      headers: orgKey(acme),
      body: { number: "+918065978099" },
    }),
    403,
    "Admin access required",
  );
  expectError(
    await app.request("GET", "/api/v1/did-pool/admin/requests", { headers: orgKey(acme) }),
    403,
    "Admin access required",
  );
  expectError(
    await app.request("GET", "/api/v1/did-pool/available", {
      headers: await adminHeaders(app),
    }),
    403,
    ADMIN_TOKEN_REFUSAL,
  );
  expectError(
    await app.request("POST", "/api/v1/did-pool/admin", {
      headers: await adminHeaders(app),
      body: { number: "+918065978001" },
    }),
    409,
    "DID +918065978001 already exists",
  );
});

test("set-default: another org's DID is 403, a missing one 404, nothing changes", async () => {
  const acmeDefault = await defaultsOf(acme.id);
  const betaDid = (await app.request("GET", "/api/v1/dids", { headers: orgKey(beta) })).body
    .data[0];
  app.deploys.length = 0;
  expectError(
    await app.request("POST", `/api/v1/did-pool/${betaDid.id}/set-default`, {
      headers: orgKey(acme),
    }),
    403,
    "Access denied",
  );
  expectError(
    await app.request("POST", "/api/v1/did-pool/00000000-0000-4000-8000-000000000000/set-default", {
      headers: orgKey(acme),
    }),
    404,
    "DID not found",
  );
  expectError(
    await app.request("POST", "/api/v1/did-pool/00000000-0000-4000-8000-000000000000/request", {
      headers: orgKey(acme),
    }),
    404,
    "DID not found",
  );
  assert.equal(await defaultsOf(acme.id), acmeDefault);
  assert.equal(app.deploys, []);
});

async function userToken(role: string): Promise<string> {
  const email = `${role}@acme.test`;
  const added = await app.request("POST", "/api/v1/org-users", {
    headers: orgKey(acme),
    body: { email, role },
  });
  assert.is(added.status, 201, added.text);
  const login = await app.request("POST", "/api/v1/auth/user-login", {
    body: { idp_token: await idp.idToken({ sub: `idp|${role}`, email }) },
  });
  assert.is(login.status, 200, login.text);
  return login.body.token as string;
}

test("set-default needs the owner or manager role", async () => {
  const rows = await createDidRepository(app.db).listRecordsByOrg(acme.id);
  const target = rows.find((r) => !r.is_default)!;
  for (const role of ["admin", "agent", "viewer"]) {
    expectError(
      await app.request("POST", `/api/v1/did-pool/${target.id}/set-default`, {
        headers: bearer(await userToken(role)),
      }),
      403,
      `Role '${role}' lacks permission: dids.set_default`,
    );
  }
  assert.not.equal(await defaultsOf(acme.id), [target.number]);
  for (const role of ["manager", "owner"]) {
    const res = await app.request("POST", `/api/v1/did-pool/${target.id}/set-default`, {
      headers: bearer(await userToken(role)),
    });
    assert.is(res.status, 200, `${role}: ${res.text}`);
  }
  assert.equal(await defaultsOf(acme.id), [target.number]);
});

test.run();
