// Access control over the whole route registry: which writes need `org.manage`, who holds it, and
// a sweep of every org route that names a resource by id, called with another org's credential.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RouteDefinition } from "../../src/api/registry.js";
import { allRoutes } from "../../src/api/routes/index.js";
import { API_KEY_PERMISSIONS } from "../../src/domain/access/permissions.js";
import { bearer, expectError, rowsOf, startTestApp, type TestApp } from "./helpers.js";
import { startIdentityProvider, type TestIdentityProvider } from "./identity-provider.js";

let idp: TestIdentityProvider;
let app: TestApp;
let acme: { id: string; api_key: string };
let other: { id: string; api_key: string };

test.before(async () => {
  idp = await startIdentityProvider();
  app = await startTestApp({ env: idp.env });
  acme = await app.createOrg("Acme");
  other = await app.createOrg("Other");
});
test.after(async () => {
  await app.close();
  await idp.close();
});

const orgKey = (org: { api_key: string }) => ({ "x-api-key": org.api_key });
const isOrgRoute = (r: RouteDefinition) => r.authKinds.includes("org");

// Org-scoped writes that are not configuration: each has its own, narrower rule.
const WRITES_WITHOUT_ORG_MANAGE = new Set([
  "POST /tts/preview", // synthesizes a sample; changes nothing
  "POST /simulate", // walks the stored configuration like a read; changes nothing
]);

test("every org-scoped write declares the permission it needs", () => {
  const open = allRoutes
    .filter((r) => isOrgRoute(r) && r.method !== "get" && !r.permission)
    .map((r) => `${r.method.toUpperCase()} ${r.path}`)
    .filter((name) => !WRITES_WITHOUT_ORG_MANAGE.has(name));
  assert.equal(open, [], "writes open to every org credential");
});

test("configuration writes refuse ak_ keys (even holding all 14) and roles without org.manage", async () => {
  const created = await app.request("POST", "/api/v1/api-keys", {
    headers: orgKey(acme),
    body: { name: "everything", permissions: [...API_KEY_PERMISSIONS] },
  });
  assert.is(created.status, 201, created.text);
  const akKey = { "x-api-key": created.body.api_key as string };

  const member = await app.request("POST", "/api/v1/org-users", {
    headers: orgKey(acme),
    body: { email: "vera@example.test", role: "viewer" },
  });
  assert.is(member.status, 201, member.text);
  const signedIn = await app.request("POST", "/api/v1/auth/user-login", {
    body: { idp_token: await idp.idToken({ sub: "idp|vera", email: "vera@example.test" }) },
  });
  assert.is(signedIn.status, 200, signedIn.text);
  const viewer = bearer(signedIn.body.token);

  const writes: Array<[string, unknown]> = [
    ["/api/v1/users", { extension: "2001", name: "Alice" }],
    ["/api/v1/queues", { number: "4600", name: "Sales" }],
    ["/api/v1/ivrs", { name: "Main", extension: "800" }],
    ["/api/v1/trunks", { name: "carrier", host: "sip.carrier.example" }],
    [
      "/api/v1/time-conditions",
      {
        name: "office",
        time_zone: "Europe/London",
        open_destination_type: "hangup",
        closed_destination_type: "hangup",
      },
    ],
  ];
  for (const [path, body] of writes) {
    expectError(
      await app.request("POST", path, { headers: akKey, body }),
      403,
      "API key lacks permission: org.manage",
    );
    expectError(
      await app.request("POST", path, { headers: viewer, body }),
      403,
      "Role 'viewer' lacks permission: org.manage",
    );
    // Reads stay open to every org credential.
    assert.is((await app.request("GET", path, { headers: akKey })).status, 200, path);
    assert.is((await app.request("GET", path, { headers: viewer })).status, 200, path);
  }
  // Nothing was created by the refused calls.
  for (const [path] of writes) {
    const list = await app.request("GET", path, { headers: orgKey(acme) });
    assert.equal(rowsOf(list), [], path);
  }
});

// Bodies that pass validation where `{}` would not, so the owner check is what answers.
const VALID_BODIES: Record<string, unknown> = {
  "POST /queues/{id}/members": { extension: "2101" },
  "PATCH /queues/{id}/members": { extension: "2101" },
  "DELETE /queues/{id}/members": { extension: "2101" },
  "PUT /ivrs/{id}/menu": { options: [] },
};

test("another org's resources: every {id} route answers 403/404, no list shows them", async () => {
  // One resource of each kind in Acme, with a name that would show if it leaked.
  const marker = "AcmeSecretName";
  const made = async (path: string, body: unknown) => {
    const res = await app.request("POST", `/api/v1${path}`, { headers: orgKey(acme), body });
    assert.is(res.status, 201, `${path}: ${res.text}`);
    return res.body.id as string;
  };
  const trunkId = await made("/trunks", { name: "carrier", host: "sip.carrier.example" });
  const ids: Record<string, string> = {
    "/users": await made("/users", { extension: "2101", name: marker }),
    "/queues": await made("/queues", { number: "4601", name: marker }),
    "/ivrs": await made("/ivrs", { name: marker, extension: "801" }),
    "/trunks": trunkId,
    "/outbound-routes": await made("/outbound-routes", {
      name: marker,
      patterns: ["_9X."],
      trunk: trunkId,
    }),
    "/time-conditions": await made("/time-conditions", {
      name: "office",
      description: marker,
      time_zone: "Europe/London",
      open_destination_type: "hangup",
      closed_destination_type: "hangup",
    }),
    "/webhooks": await withPrivateTargets(app, () =>
      made("/webhooks", { url: "http://127.0.0.1:9/acme", events: ["call.ended"] }),
    ),
  };
  const before = await snapshot(ids);

  const swept: string[] = [];
  for (const route of allRoutes.filter(isOrgRoute)) {
    const prefix = Object.keys(ids).find((p) => route.path.startsWith(`${p}/{id}`));
    if (!prefix) continue;
    const path = route.path
      .replace("{id}", ids[prefix] as string)
      .replace("{extension}", "2101")
      .replace("{deliveryId}", "00000000-0000-4000-8000-000000000000");
    const name = `${route.method.toUpperCase()} ${route.path}`;
    const res = await app.request(route.method.toUpperCase(), `/api/v1${path}`, {
      headers: orgKey(other),
      ...(route.method === "get" ? {} : { body: VALID_BODIES[name] ?? {} }),
    });
    assert.ok([403, 404].includes(res.status), `${name}: ${res.status} ${res.text}`);
    assert.not.ok(res.text.includes(marker), `${name} leaked data`);
    assert.type(res.body?.error, "string", name);
    swept.push(name);
  }
  assert.ok(swept.length >= 20, `swept ${swept.length} routes`);

  // Every list (an org GET without path parameters) answered to Other shows none of Acme's rows.
  const lists = allRoutes.filter(
    (r) => isOrgRoute(r) && r.method === "get" && !r.path.includes("{"),
  );
  for (const route of lists) {
    const res = await app.request("GET", `/api/v1${route.path}`, { headers: orgKey(other) });
    assert.not.ok(res.text.includes(marker), `GET ${route.path} leaked Acme's rows`);
    for (const id of Object.values(ids)) {
      assert.not.ok(res.text.includes(id), `GET ${route.path} leaked an id of Acme`);
    }
  }
  assert.ok(lists.length >= 10, `checked ${lists.length} lists`);
  for (const path of ["/users", "/queues", "/ivrs", "/outbound-routes"]) {
    const own = await app.request("GET", `/api/v1${path}`, { headers: orgKey(acme) });
    assert.ok(own.text.includes(marker), `${path}: Acme sees its own rows`);
  }
  assert.equal(await snapshot(ids), before, "Acme's resources are unchanged");
});

/** Runs `action` with loopback webhook URLs allowed (no name lookups in tests). */
async function withPrivateTargets<T>(app: TestApp, action: () => Promise<T>): Promise<T> {
  const config = app.pbx.deps.config;
  config.webhookAllowPrivate = true;
  try {
    return await action();
  } finally {
    config.webhookAllowPrivate = false;
  }
}

async function snapshot(ids: Record<string, string>) {
  const out: Record<string, unknown> = {};
  for (const [prefix, id] of Object.entries(ids)) {
    const res = await app.request("GET", `/api/v1${prefix}/${id}`, { headers: orgKey(acme) });
    assert.is(res.status, 200, `${prefix}: ${res.text}`);
    out[prefix] = res.body;
  }
  return out;
}

test.run();
