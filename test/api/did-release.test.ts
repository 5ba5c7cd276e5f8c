// DELETE /dids/{id} (issue 19, defect 12): an org releases a pool number back to the pool at once
// (its own numbers, from POST /dids, are deleted instead: test/api/did-source.test.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUserRepository } from "../../src/store/user-repository.js";
import { addToPool, assignFromPool, orgKey, seedUser, type TestOrg } from "./dids-fixtures.js";
import { expectError, rowsOf, startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let acme: TestOrg;
let beta: TestOrg;

test.before(async () => {
  app = await startTestApp();
  acme = await app.createOrg("Acme");
  beta = await app.createOrg("Beta");
});
test.after(async () => app.close());

/** A pool number assigned to `org` through the pool flow (the numbers release returns). */
const addDid = async (org: TestOrg, number: string) => {
  const pooled = await addToPool(app, number);
  await assignFromPool(app, org, pooled.id);
  const res = await app.request("GET", "/api/v1/dids", { headers: orgKey(org) });
  return rowsOf(res).find((d: { id: string }) => d.id === pooled.id) as {
    id: string;
    number: string;
    is_default: boolean;
  };
};

test("a released number is available in the pool, unrouted, and the default moves on", async () => {
  const first = await addDid(acme, "+918065978101");
  const second = await addDid(acme, "+918065978102");
  const routed = await app.request("PUT", `/api/v1/dids/${first.id}/routing`, {
    headers: orgKey(acme),
    body: { routing_type: "external", routing_destination: "+14155550100" },
  });
  assert.is(routed.status, 200, routed.text);
  app.deploys.length = 0;

  const released = await app.request("DELETE", `/api/v1/dids/${first.id}`, {
    headers: orgKey(acme),
  });
  assert.is(released.status, 204, released.text);
  assert.equal(app.deploys, [acme.id], "the org (and so the gateway) is redeployed");

  const mine = await app.request("GET", "/api/v1/dids", { headers: orgKey(acme) });
  assert.equal(
    rowsOf(mine).map((d: { number: string; is_default: boolean }) => [d.number, d.is_default]),
    [[second.number, true]],
  );
  const available = await app.request("GET", "/api/v1/did-pool/available", {
    headers: orgKey(beta),
  });
  const back = rowsOf(available).find((d: { id: string }) => d.id === first.id);
  assert.ok(back, "the number is offered to other orgs");
  assert.is(back.pool_status, "available");
  assert.is(back.org_id, null);
  assert.is(back.routing_type, null);
  assert.is(back.routing_destination, null);

  // Another org can take it through the pool flow.
  const requested = await app.request("POST", `/api/v1/did-pool/${first.id}/request`, {
    headers: orgKey(beta),
  });
  assert.is(requested.status, 201, requested.text);
});

test("a number the org still relies on is refused with 409; another org's is 403, unknown 404", async () => {
  const did = await addDid(beta, "+918065978201");
  const user = await seedUser(app, beta.id, "201");
  await createUserRepository(app.db).update(beta.id, user.id!, {
    ...user,
    outbound_did: did.number,
  });
  const refused = await app.request("DELETE", `/api/v1/dids/${did.id}`, { headers: orgKey(beta) });
  assert.is(refused.status, 409, refused.text);
  assert.match(refused.body.error, `DID ${did.number} is still in use`);
  assert.match(refused.body.error, "outbound_did");

  expectError(
    await app.request("DELETE", `/api/v1/dids/${did.id}`, { headers: orgKey(acme) }),
    403,
    "Access denied",
  );
  const pool = await addToPool(app, "+918065978299");
  assert.is(
    (await app.request("DELETE", `/api/v1/dids/${pool.id}`, { headers: orgKey(acme) })).status,
    403,
  );
  assert.is(
    (
      await app.request("DELETE", "/api/v1/dids/00000000-0000-4000-8000-000000000000", {
        headers: orgKey(acme),
      })
    ).status,
    404,
  );
});

test.run();
