// `/dids`: adding numbers to an org (normalised, sentinel refused, one number in any form),
// inbound routing (IVR stored by UUID), deploys scheduled, tenant isolation, and the compiled
// dialplan of the stored state.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileOrg } from "../../src/compiler/index.js";
import { SENTINEL_MESSAGE } from "../../src/domain/routing/dids.js";
import { loadOrgState } from "../../src/store/load-org-state.js";
import { orgKey, seedIvr, seedQueue, seedUser, type TestOrg } from "./dids-fixtures.js";
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

const addDid = (org: TestOrg, body: Record<string, unknown>) =>
  app.request("POST", "/api/v1/dids", { headers: orgKey(org), body });
const route = (org: TestOrg, id: string, body: Record<string, unknown>) =>
  app.request("PUT", `/api/v1/dids/${id}/routing`, { headers: orgKey(org), body });

test("POST /dids normalises the number, assigns it, makes the first one default, deploys", async () => {
  app.deploys.length = 0;
  const first = await addDid(acme, { number: "+91 80659-78001" });
  assert.is(first.status, 201, first.text);
  assert.is(first.body.number, "+918065978001");
  assert.is(first.body.org_id, acme.id);
  assert.is(first.body.pool_status, "assigned");
  assert.is(first.body.is_default, true);
  assert.is(first.body.routing_environment, "prod");
  const second = await addDid(acme, { number: "(080) 6597 8002" });
  assert.is(second.status, 201, second.text);
  assert.is(second.body.number, "08065978002", "local form kept");
  assert.is(second.body.is_default, false, "only the first becomes default by itself");
  assert.equal(app.deploys, [acme.id, acme.id]);
  const list = await app.request("GET", "/api/v1/dids", { headers: orgKey(acme) });
  assert.equal(
    list.body.data.map((d: { number: string }) => d.number),
    ["+918065978001", "08065978002"],
  );
});

test("is_default on create moves the default: still exactly one", async () => {
  const third = await addDid(acme, { number: "918065978003", is_default: true });
  assert.is(third.status, 201, third.text);
  const list = await app.request("GET", "/api/v1/dids", { headers: orgKey(acme) });
  const defaults = list.body.data.filter((d: { is_default: boolean }) => d.is_default);
  assert.equal(
    defaults.map((d: { number: string }) => d.number),
    ["918065978003"],
  );
});

test("numbers outside the three forms are refused with a clear 400", async () => {
  const message = (n: string) =>
    `Invalid DID number '${n}': use E.164 (+919876543210), local 11 digits starting 0 (09876543210) or international digits (919876543210)`;
  for (const bad of ["12ab345678", "+0123456789", "0123", "0806597800", "1234567890123456"]) {
    expectError(await addDid(acme, { number: bad }), 400, message(bad));
  }
  const newline = await addDid(acme, { number: "+918065978009\n[evil]" });
  assert.is(newline.status, 400);
  assert.ok(app.deploys.every((id) => id === acme.id));
});

test("the sentinel can never belong to an org, in any form", async () => {
  for (const sentinel of ["+918065978000", "08065978000", "918065978000", "+91 8065 978000"]) {
    expectError(await addDid(acme, { number: sentinel }), 400, SENTINEL_MESSAGE);
  }
});

test("one number in any form exists once, across orgs too", async () => {
  expectError(
    await addDid(acme, { number: "08065978001" }),
    409,
    "DID +918065978001 already exists",
  );
  expectError(
    await addDid(beta, { number: "+918065978002" }),
    409,
    "DID 08065978002 already exists",
  );
});

test("routing to an IVR by extension stores its UUID; the dialplan jumps to its extension", async () => {
  const ivr = await seedIvr(app, acme.id, "5000", "Main menu");
  const did = (await addDid(acme, { number: "+918065978010" })).body;
  app.deploys.length = 0;
  const res = await route(acme, did.id, { routing_type: "ivr", routing_destination: "5000" });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.routing_type, "ivr");
  assert.is(res.body.routing_destination, ivr.id, "stored by UUID, not by extension");
  assert.equal(app.deploys, [acme.id]);
  const byUuid = await route(acme, did.id, { routing_type: "ivr", routing_destination: ivr.id });
  assert.is(byUuid.body.routing_destination, ivr.id);

  const state = await loadOrgState(app.db, acme.id);
  const { files } = compileOrg(state);
  const dialplan = files.find((f) => f.path.endsWith("/extensions.conf"))?.content ?? "";
  const prefix = state.org.context_prefix;
  const entry = dialplan.split("\n").findIndex((l) => l.startsWith("exten => +918065978010,"));
  assert.ok(entry >= 0, "the DID has an entry in the incoming context");
  const block = dialplan
    .split("\n")
    .slice(entry, entry + 12)
    .join("\n");
  assert.match(block, `Goto(${prefix}ivr,5000,1)`);
});

test("routing to extension, queue (UUID stored as number) and external (verbatim)", async () => {
  await seedUser(app, acme.id, "101", "Ann");
  const queue = await seedQueue(app, acme.id, "600", "Sales");
  const did = (await addDid(acme, { number: "+918065978011" })).body;
  const ext = await route(acme, did.id, { routing_type: "extension", routing_destination: "101" });
  assert.is(ext.body.routing_destination, "101");
  const q = await route(acme, did.id, { routing_type: "queue", routing_destination: queue.id });
  assert.is(q.body.routing_destination, "600");
  const external = await route(acme, did.id, {
    routing_type: "external",
    routing_destination: "+14155550100",
  });
  assert.is(external.body.routing_destination, "+14155550100");
  const unrouted = await route(acme, did.id, { routing_type: null });
  assert.is(unrouted.body.routing_type, null);
  assert.is(unrouted.body.routing_destination, null);
});

test("routing rules answer with the model's messages", async () => {
  const did = (await addDid(acme, { number: "+918065978012" })).body;
  app.deploys.length = 0;
  expectError(
    await route(acme, did.id, { routing_type: "extension", routing_destination: "999" }),
    400,
    "no user with extension 999",
  );
  expectError(
    await route(acme, did.id, { routing_type: "external", routing_destination: "12ab" }),
    400,
    "Phone number 12ab does not look like a valid number (need 7-15 digits)",
  );
  expectError(
    await route(acme, did.id, { routing_type: "ivr" }),
    400,
    "routing_destination required for routing_type=ivr",
  );
  expectError(
    await route(acme, did.id, { routing_type: "ivr", routing_destination: "7777" }),
    400,
    "no IVR with extension 7777",
  );
  expectError(
    await route(acme, did.id, { routing_type: null, routing_destination: "101" }),
    400,
    "routing_type required with a routing_destination",
  );
  expectError(
    await route(acme, did.id, { routing_type: "fax", routing_destination: "101" }),
    400,
    "routing_type must be one of: extension, queue, ivr, external, time_condition",
  );
  assert.equal(app.deploys, [], "a refused change schedules nothing");
});

test("tenant isolation: another org's DID is 403 and never shown; a missing one 404", async () => {
  const mine = (await addDid(acme, { number: "+918065978020" })).body;
  const theirs = await app.request("GET", "/api/v1/dids", { headers: orgKey(beta) });
  assert.is(theirs.status, 200);
  assert.ok(!theirs.text.includes("918065978020"));
  expectError(
    await app.request("GET", `/api/v1/dids/${mine.id}`, { headers: orgKey(beta) }),
    403,
    "Access denied",
  );
  app.deploys.length = 0;
  const hijack = await route(beta, mine.id, {
    routing_type: "external",
    routing_destination: "+14155550100",
  });
  expectError(hijack, 403, "Access denied");
  assert.equal(app.deploys, []);
  const still = await app.request("GET", `/api/v1/dids/${mine.id}`, { headers: orgKey(acme) });
  assert.is(still.body.routing_type, null);
  const missing = "00000000-0000-4000-8000-000000000000";
  expectError(
    await app.request("GET", `/api/v1/dids/${missing}`, { headers: orgKey(acme) }),
    404,
    "DID not found",
  );
  expectError(await route(acme, missing, { routing_type: null }), 404, "DID not found");
});

test("without credentials: 401", async () => {
  expectError(await app.request("GET", "/api/v1/dids"), 401, "Authentication required");
});

test.run();
