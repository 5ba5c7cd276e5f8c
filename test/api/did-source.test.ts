// Numbers an org adds itself (`POST /dids`) are its own trunks' business (issue 28 item 9): the
// platform's carriers deliver only numbers the platform assigned from the pool. Such a number is
// shown as `source: "org"`, reaches the org's incoming context (its trunks land there) but not
// the shared gateway, and a number of the pool, in any state, cannot be taken this way.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileGateway, compileOrg } from "../../src/compiler/index.js";
import { loadGatewayState } from "../../src/store/load-gateway-state.js";
import { loadOrgState } from "../../src/store/load-org-state.js";
import { orgKey, type TestOrg } from "./dids-fixtures.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let acme: TestOrg;
let admin: Record<string, string>;

test.before(async () => {
  app = await startTestApp();
  acme = await app.createOrg("Acme");
  admin = { authorization: `Bearer ${await app.adminToken()}` };
});
test.after(async () => app.close());

const gatewayText = async () => {
  const state = await loadGatewayState(app.db, { environment: "prod", staging_endpoint: "s" });
  return compileGateway(state)
    .files.map((f) => f.content)
    .join("\n");
};

test("a self-created number is source org: in the org's incoming context, not the gateway", async () => {
  const own = await app.request("POST", "/api/v1/dids", {
    headers: orgKey(acme),
    body: { number: "+442079460000" },
  });
  assert.is(own.status, 201, own.text);
  assert.is(own.body.source, "org");

  const pooled = await app.request("POST", "/api/v1/did-pool/admin", {
    headers: admin,
    body: { number: "+918065978005" },
  });
  assert.is(pooled.status, 201, pooled.text);
  assert.is(pooled.body.source, "pool");
  const requested = await app.request("POST", `/api/v1/did-pool/${pooled.body.id}/request`, {
    headers: orgKey(acme),
  });
  assert.is(requested.status, 201, requested.text);
  const approved = await app.request(
    "POST",
    `/api/v1/did-pool/admin/requests/${requested.body.id}/approve`,
    { headers: admin },
  );
  assert.is(approved.status, 200, approved.text);

  const gateway = await gatewayText();
  assert.match(gateway, "918065978005", "the pool-assigned number is dispatched");
  assert.not.match(gateway, "442079460000", "the org's own number is not");

  // The org's trunks land in its incoming context, which answers the number: no dialplan change
  // is needed for its own carrier to reach it.
  const trunk = await app.request("POST", "/api/v1/trunks", {
    headers: orgKey(acme),
    body: { name: "own-carrier", host: "sip.own-carrier.example", match: ["198.51.100.7"] },
  });
  assert.is(trunk.status, 201, trunk.text);
  const state = await loadOrgState(app.db, acme.id);
  const files = compileOrg(state).files;
  const prefix = state.org.context_prefix;
  const pjsip = files.find((f) => f.path.endsWith("pjsip.conf"))!.content;
  assert.match(pjsip, `; trunk own-carrier\ntype=endpoint\ncontext=${prefix}incoming\n`);
  const dialplan = files.find((f) => f.path.endsWith("extensions.conf"))!.content;
  assert.match(dialplan, new RegExp(`\\[${prefix}incoming\\][^[]*exten => \\+442079460000,1,`));

  const listed = await app.request("GET", "/api/v1/dids", { headers: orgKey(acme) });
  const sources = Object.fromEntries(
    (listed.body.data ?? listed.body).map((d: { number: string; source: string }) => [
      d.number,
      d.source,
    ]),
  );
  assert.equal(sources, { "+442079460000": "org", "+918065978005": "pool" });
});

test("a number of the pool, in any state, is refused with the request flow named", async () => {
  const pooled = await app.request("POST", "/api/v1/did-pool/admin", {
    headers: admin,
    body: { number: "+918065978006" },
  });
  assert.is(pooled.status, 201, pooled.text);
  for (const form of ["+918065978006", "08065978006"]) {
    expectError(
      await app.request("POST", "/api/v1/dids", { headers: orgKey(acme), body: { number: form } }),
      409,
      `+918065978006 is a number of the DID pool: request it with POST /did-pool/${pooled.body.id}/request`,
    );
  }
  const reserved = await app.request("PUT", `/api/v1/did-pool/admin/${pooled.body.id}`, {
    headers: admin,
    body: { pool_status: "reserved" },
  });
  assert.is(reserved.status, 200, reserved.text);
  const again = await app.request("POST", "/api/v1/dids", {
    headers: orgKey(acme),
    body: { number: "+918065978006" },
  });
  assert.is(again.status, 409);
  assert.match(again.body.error, "POST /did-pool/");
});

test("releasing a self-created number removes it; it never enters the pool", async () => {
  const own = await app.request("POST", "/api/v1/dids", {
    headers: orgKey(acme),
    body: { number: "+442079460001" },
  });
  assert.is(own.status, 201, own.text);
  const released = await app.request("DELETE", `/api/v1/dids/${own.body.id}`, {
    headers: orgKey(acme),
  });
  assert.is(released.status, 204, released.text);
  const pool = await app.request("GET", "/api/v1/did-pool/admin?limit=500", { headers: admin });
  assert.not.ok(
    (pool.body.data ?? pool.body).some((d: { number: string }) => d.number === "+442079460001"),
  );
});

test.run();
