// Call queues over the API (`/queues`, SPEC.md §4.3): create with model defaults, number
// collisions, partial updates, the timeout destination pair and its 7-15 digit rule, members,
// delete, tenant isolation, concurrency, and the compiled queues.conf.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectError, startTestApp, type TestApp } from "./helpers.js";
import {
  claimHolder,
  compiledFiles,
  deploysSince,
  newOrg,
  seedDid,
  seedIvr,
  type TestOrg,
} from "./users-helpers.js";

let app: TestApp;
let acme: TestOrg;
let other: TestOrg;

const PAIR = "timeout_destination_type and timeout_destination must be given together";

test.before(async () => {
  app = await startTestApp();
  acme = await newOrg(app, "Acme");
  other = await newOrg(app, "Other");
  for (const [extension, name] of [
    ["4001", "Alice"],
    ["4002", "Bob"],
  ]) {
    const res = await app.request("POST", "/api/v1/users", {
      headers: acme.headers,
      body: { extension, name },
    });
    assert.is(res.status, 201, res.text);
  }
});
test.after(async () => {
  await app.close();
});

async function createQueue(org: TestOrg, body: Record<string, unknown>) {
  return app.request("POST", "/api/v1/queues", { headers: org.headers, body });
}

async function update(id: string, body: Record<string, unknown>, org = acme) {
  return app.request("PUT", `/api/v1/queues/${id}`, { headers: org.headers, body });
}

test("POST /queues creates a queue with model defaults, claims its number, schedules a deploy", async () => {
  const mark = app.deploys.length;
  const res = await createQueue(acme, { number: "4600", name: "Sales" });
  assert.is(res.status, 201, res.text);
  const { id, ...rest } = res.body;
  assert.equal(rest, {
    number: "4600",
    name: "Sales",
    strategy: "ringall",
    moh: "default",
    max_wait: 300,
    timeout_destination_type: "none",
    timeout_destination: null,
    members: [],
  });
  assert.equal(deploysSince(app, mark), [acme.id]);
  assert.equal(await claimHolder(app, acme.id, "4600"), { type: "queue", id, name: "Sales" });
  const got = await app.request("GET", `/api/v1/queues/${id}`, { headers: acme.headers });
  assert.equal(got.body, res.body);
  const list = await app.request("GET", "/api/v1/queues", { headers: acme.headers });
  assert.ok(list.body.data.some((q: { id: string }) => q.id === id));
});

test("POST /queues: a taken number is 409 with SPEC §7's message", async () => {
  expectError(
    await createQueue(acme, { number: "4001", name: "Q" }),
    409,
    "Extension 4001 is already assigned to user 'Alice'",
  );
  expectError(
    await createQueue(acme, { number: "4600", name: "Q" }),
    409,
    "Extension 4600 is already used by queue 'Sales'",
  );
  await seedIvr(app, acme.id, "Menu", "4700");
  expectError(
    await createQueue(acme, { number: "4700", name: "Q" }),
    409,
    "Extension 4700 is already used by IVR 'Menu'",
  );
  expectError(
    await createQueue(acme, { number: "46O1", name: "Q" }),
    400,
    "number must be 2-15 digits",
  );
  expectError(
    await createQueue(acme, { number: "4601", name: "Q", strategy: "loudest" }),
    400,
    "strategy must be one of: ringall, leastrecent, fewestcalls, random, rrmemory, linear, wrandom",
  );
  expectError(
    await createQueue(acme, { number: "4601", name: "Q", moh: "x;y" }),
    400,
    "moh must be a music-on-hold class: letters, digits, _ and -, at most 40",
  );
});

test("the timeout destination pair is written together, with the 7-15 digit rule for phone", async () => {
  const q = (await createQueue(acme, { number: "4610", name: "Timeouts", max_wait: 60 })).body;
  const mark = app.deploys.length;
  expectError(await update(q.id, { timeout_destination_type: "phone" }), 400, PAIR);
  expectError(await update(q.id, { timeout_destination: "+919876543210" }), 400, PAIR);
  expectError(
    await createQueue(acme, { number: "4611", name: "X", timeout_destination: "4001" }),
    400,
    PAIR,
  );
  expectError(
    await update(q.id, { timeout_destination_type: "phone", timeout_destination: "12345" }),
    400,
    "Phone number 12345 does not look like a valid number (need 7-15 digits)",
  );
  expectError(
    await update(q.id, { timeout_destination_type: "phone", timeout_destination: "98765abc432" }),
    400,
    "Phone number 98765abc432 does not look like a valid number (need 7-15 digits)",
  );
  expectError(
    await update(q.id, { timeout_destination_type: "user", timeout_destination: "4999" }),
    400,
    "no user with extension 4999",
  );
  expectError(
    await update(q.id, { timeout_destination_type: "queue", timeout_destination: "4610" }),
    400,
    "a queue cannot time out into itself",
  );
  expectError(
    await update(q.id, { timeout_destination_type: "queue", timeout_destination: "4998" }),
    400,
    "no queue with number 4998",
  );
  expectError(
    await update(q.id, { timeout_destination_type: "pager", timeout_destination: "1" }),
    400,
    "timeout_destination_type must be one of: none, user, queue, phone, time_condition",
  );
  expectError(
    await update(q.id, { timeout_destination_type: "none", timeout_destination: "4001" }),
    400,
    "timeout_destination must be empty when timeout_destination_type is none",
  );
  assert.equal(deploysSince(app, mark), [], "refused saves deploy nothing");

  const phone = await update(q.id, {
    timeout_destination_type: "phone",
    timeout_destination: "+919876543210",
  });
  assert.is(phone.status, 200, phone.text);
  assert.is(phone.body.timeout_destination, "+919876543210");
  assert.is(phone.body.max_wait, 60, "omitted fields keep their value");
  const user = await update(q.id, {
    timeout_destination_type: "user",
    timeout_destination: "4001",
  });
  assert.is(user.body.timeout_destination_type, "user");
  const queue = await update(q.id, {
    timeout_destination_type: "queue",
    timeout_destination: "4600",
  });
  assert.is(queue.body.timeout_destination, "4600");
  const renamed = await update(q.id, { name: "Renamed", strategy: "rrmemory" });
  assert.equal(
    [renamed.body.name, renamed.body.strategy, renamed.body.timeout_destination_type],
    ["Renamed", "rrmemory", "queue"],
    "a name change leaves the pair alone",
  );
  const cleared = await update(q.id, { timeout_destination_type: "none" });
  assert.equal(
    [cleared.body.timeout_destination_type, cleared.body.timeout_destination],
    ["none", null],
  );
  assert.equal(deploysSince(app, mark), [acme.id, acme.id, acme.id, acme.id, acme.id]);
});

test("PUT /queues/{id}: a changed number is re-claimed; one a DID routes to is refused", async () => {
  const q = (await createQueue(acme, { number: "4620", name: "Moves" })).body;
  expectError(
    await update(q.id, { number: "4002" }),
    409,
    "Extension 4002 is already assigned to user 'Bob'",
  );
  const moved = await update(q.id, { number: "4621" });
  assert.is(moved.status, 200, moved.text);
  assert.is(await claimHolder(app, acme.id, "4620"), undefined);
  assert.is((await claimHolder(app, acme.id, "4621"))?.id, q.id);
  await seedDid(app, acme.id, "+918065978001", {
    routing_type: "queue",
    routing_destination: "4621",
  });
  expectError(
    await update(q.id, { number: "4622" }),
    400,
    "Cannot change queue 'Moves': it is still used by DID +918065978001 (no queue with number 4621)",
  );
});

test("members: add, 409 on an existing member, 400 on an unknown user, change, remove", async () => {
  const q = (await createQueue(acme, { number: "4630", name: "Support" })).body;
  let mark = app.deploys.length;
  const added = await app.request("POST", `/api/v1/queues/${q.id}/members`, {
    headers: acme.headers,
    body: { extension: "4001", penalty: 2 },
  });
  assert.is(added.status, 201, added.text);
  assert.equal(added.body.members, [{ extension: "4001", penalty: 2, ring_time: 20 }]);
  assert.equal(deploysSince(app, mark), [acme.id]);
  const second = await app.request("POST", `/api/v1/queues/${q.id}/members`, {
    headers: acme.headers,
    body: { extension: "4002", ring_time: 15 },
  });
  assert.equal(
    second.body.members.map((m: { extension: string }) => m.extension),
    ["4001", "4002"],
  );
  mark = app.deploys.length;
  expectError(
    await app.request("POST", `/api/v1/queues/${q.id}/members`, {
      headers: acme.headers,
      body: { extension: "4001" },
    }),
    409,
    "Extension 4001 is already a member of queue 'Support'",
  );
  expectError(
    await app.request("POST", `/api/v1/queues/${q.id}/members`, {
      headers: acme.headers,
      body: { extension: "4999" },
    }),
    400,
    "no user with extension 4999",
  );
  expectError(
    await app.request("POST", `/api/v1/queues/${q.id}/members`, {
      headers: acme.headers,
      body: { extension: "4002", penalty: -1 },
    }),
    400,
    "penalty must be >= 0",
  );
  assert.equal(deploysSince(app, mark), []);
  const patched = await app.request("PATCH", `/api/v1/queues/${q.id}/members/4001`, {
    headers: acme.headers,
    body: { ring_time: 25 },
  });
  assert.is(patched.status, 200, patched.text);
  assert.equal(deploysSince(app, mark), [acme.id]);
  assert.equal(patched.body.members[0], { extension: "4001", penalty: 2, ring_time: 25 });
  expectError(
    await app.request("PATCH", `/api/v1/queues/${q.id}/members/4999`, {
      headers: acme.headers,
      body: { penalty: 1 },
    }),
    404,
    "Queue member not found",
  );
  mark = app.deploys.length;
  const removed = await app.request("DELETE", `/api/v1/queues/${q.id}/members/4002`, {
    headers: acme.headers,
  });
  assert.is(removed.status, 204);
  assert.equal(deploysSince(app, mark), [acme.id]);
  expectError(
    await app.request("DELETE", `/api/v1/queues/${q.id}/members/4002`, { headers: acme.headers }),
    404,
    "Queue member not found",
  );
  const got = await app.request("GET", `/api/v1/queues/${q.id}`, { headers: acme.headers });
  assert.equal(got.body.members, [{ extension: "4001", penalty: 2, ring_time: 25 }]);
});

test("the configuration the store holds compiles with the queue and its member line", async () => {
  const q = (await createQueue(acme, { number: "4640", name: "Compiled", strategy: "leastrecent" }))
    .body;
  await app.request("POST", `/api/v1/queues/${q.id}/members`, {
    headers: acme.headers,
    body: { extension: "4002", penalty: 3 },
  });
  const queues = (await compiledFiles(app, acme.id))["queues.conf"] ?? "";
  const prefix = `org_${acme.id}_`;
  const section = queues.slice(queues.indexOf(`[${prefix}q4640]`));
  assert.ok(section.length > 0 && queues.includes(`[${prefix}q4640]`), queues);
  assert.match(section, "strategy=leastrecent");
  assert.match(section, `member=Local/4640*4002@${prefix}qmember/n,3,Bob,PJSIP/${prefix}4002`);
});

test("DELETE /queues/{id} frees the number; refused while another queue times out into it", async () => {
  const target = (await createQueue(acme, { number: "4650", name: "Target" })).body;
  const source = (
    await createQueue(acme, {
      number: "4651",
      name: "Source",
      timeout_destination_type: "queue",
      timeout_destination: "4650",
    })
  ).body;
  assert.is(source.timeout_destination, "4650");
  expectError(
    await app.request("DELETE", `/api/v1/queues/${target.id}`, { headers: acme.headers }),
    400,
    "Cannot delete queue 'Target': it is still used by queue 'Source' (no queue with number 4650)",
  );
  assert.is(
    (await app.request("DELETE", `/api/v1/queues/${source.id}`, { headers: acme.headers })).status,
    204,
  );
  const mark = app.deploys.length;
  const res = await app.request("DELETE", `/api/v1/queues/${target.id}`, { headers: acme.headers });
  assert.is(res.status, 204);
  assert.equal(deploysSince(app, mark), [acme.id]);
  assert.is(await claimHolder(app, acme.id, "4650"), undefined);
  expectError(
    await app.request("GET", `/api/v1/queues/${target.id}`, { headers: acme.headers }),
    404,
    "Queue not found",
  );
  assert.not.ok(((await compiledFiles(app, acme.id))["queues.conf"] ?? "").includes("q4650]"));
});

test("tenant isolation: another org's queue is 403 on every route and absent from lists", async () => {
  const q = (
    await createQueue(acme, { number: "4660", name: "Private", members: [{ extension: "4001" }] })
  ).body;
  const mark = app.deploys.length;
  const calls: Array<[string, string, unknown?]> = [
    ["GET", `/api/v1/queues/${q.id}`],
    ["PUT", `/api/v1/queues/${q.id}`, { name: "Stolen" }],
    ["DELETE", `/api/v1/queues/${q.id}`],
    ["POST", `/api/v1/queues/${q.id}/members`, { extension: "4002" }],
    ["PATCH", `/api/v1/queues/${q.id}/members/4001`, { penalty: 9 }],
    ["DELETE", `/api/v1/queues/${q.id}/members/4001`],
  ];
  for (const [method, path, body] of calls) {
    const res = await app.request(method, path, {
      headers: other.headers,
      ...(body ? { body } : {}),
    });
    expectError(res, 403, "Access denied");
  }
  const missing = "00000000-0000-4000-8000-000000000002";
  for (const [method, path, body] of calls) {
    expectError(
      await app.request(method, path.replace(q.id, missing), {
        headers: acme.headers,
        ...(body ? { body } : {}),
      }),
      404,
      "Queue not found",
    );
  }
  const list = await app.request("GET", "/api/v1/queues", { headers: other.headers });
  assert.equal(list.body.data, []);
  assert.equal(deploysSince(app, mark), []);
  const still = await app.request("GET", `/api/v1/queues/${q.id}`, { headers: acme.headers });
  assert.equal(
    [still.body.name, still.body.members],
    ["Private", [{ extension: "4001", penalty: 0, ring_time: 20 }]],
  );
  expectError(await app.request("GET", "/api/v1/queues"), 401, "Authentication required");
});

test("concurrent creates of one number: exactly one 201, the rest 409", async () => {
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) => createQueue(acme, { number: "4670", name: `Racer ${i}` })),
  );
  assert.equal(results.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409]);
  const winner = results.find((r) => r.status === 201)?.body;
  for (const r of results.filter((r) => r.status === 409)) {
    assert.equal(r.body, { error: `Extension 4670 is already used by queue '${winner.name}'` });
  }
  // Racing adds of one member: one wins, the others hear it is already a member.
  const members = await Promise.all(
    Array.from({ length: 4 }, () =>
      app.request("POST", `/api/v1/queues/${winner.id}/members`, {
        headers: acme.headers,
        body: { extension: "4002" },
      }),
    ),
  );
  assert.equal(members.map((r) => r.status).sort(), [201, 409, 409, 409]);
  // Users racing for a queue's number lose too.
  const users = await Promise.all(
    Array.from({ length: 3 }, () =>
      app.request("POST", "/api/v1/users", {
        headers: acme.headers,
        body: { extension: "4670", name: "U" },
      }),
    ),
  );
  assert.equal(
    users.map((r) => r.status),
    [409, 409, 409],
  );
});

test.run();
