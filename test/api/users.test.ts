// SIP users over the API (`/users`, SPEC.md §4.3): create with a one-time SIP password, collisions
// across users/queues/IVRs, partial updates, outbound_did rules, extension changes, delete, the
// all-or-nothing batch, bot extensions, tenant isolation, concurrency, and the compiled result.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { listUsers } from "../../src/domain/users/users.js";
import { sipDigest } from "../../src/model/secrets.js";
import { storeChangeFeed } from "../../src/store/database-postgres.js";
import { storeGeneration } from "../../src/store/store-generation.js";
import { createUserRepository } from "../../src/store/user-repository.js";
import { expectError, INTERNAL_KEY, startTestApp, type TestApp } from "./helpers.js";
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

test.before(async () => {
  app = await startTestApp();
  acme = await newOrg(app, "Acme");
  other = await newOrg(app, "Other");
});
test.after(async () => {
  await app.close();
});

const prefixOf = (orgId: string) => `org_${orgId}_`;

async function create(org: TestOrg, body: Record<string, unknown>) {
  return app.request("POST", "/api/v1/users", { headers: org.headers, body });
}

async function storedCred(id: string): Promise<string | null | undefined> {
  return (await createUserRepository(app.db).findRowById(id))?.sip_md5_cred;
}

test("POST /users creates a user with model defaults and a one-time SIP password", async () => {
  const mark = app.deploys.length;
  const res = await create(acme, { extension: "2001", name: "Alice" });
  assert.is(res.status, 201, res.text);
  const { id, sip_password, ...rest } = res.body;
  assert.equal(rest, {
    extension: "2001",
    name: "Alice",
    routing_type: "human",
    status: "active",
    ring_target: "ext",
    phone_number: null,
    ring_time: 30,
    outbound_did: null,
    call_recording: true,
    sip_username: `${prefixOf(acme.id)}2001`,
  });
  assert.ok(sip_password.length >= 20, "a strong generated password");
  assert.is(
    await storedCred(id),
    sipDigest(`${prefixOf(acme.id)}2001`, sip_password),
    "stored only as the digest of <prefix><ext>:pbxctl:<password>",
  );
  assert.equal(deploysSince(app, mark), [acme.id]);
  const got = await app.request("GET", `/api/v1/users/${id}`, { headers: acme.headers });
  assert.is(got.status, 200);
  assert.equal(got.body, { id, ...rest });
  const list = await app.request("GET", "/api/v1/users", { headers: acme.headers });
  assert.ok(list.body.data.some((u: { id: string }) => u.id === id));
  assert.not.ok(list.text.includes(sip_password), "never readable again");
  assert.not.ok(list.text.includes("md5"), "the digest is not shown either");
});

test("POST /users takes a caller's SIP password and every field", async () => {
  const res = await create(acme, {
    extension: "2002",
    name: "Bob",
    routing_type: "ai_agent",
    ring_target: "phone",
    phone_number: "+919876543210",
    ring_time: 45,
    call_recording: false,
    sip_password: "Correct-Horse-9",
  });
  assert.is(res.status, 201, res.text);
  assert.is(res.body.sip_password, "Correct-Horse-9");
  assert.is(res.body.ring_target, "phone");
  assert.is(res.body.call_recording, false);
  assert.is(
    await storedCred(res.body.id),
    sipDigest(`${prefixOf(acme.id)}2002`, "Correct-Horse-9"),
  );
});

test("POST /users: a taken extension is 409 with SPEC §7's message, whoever holds it", async () => {
  const mark = app.deploys.length;
  expectError(
    await create(acme, { extension: "2001", name: "Again" }),
    409,
    "Extension 2001 is already assigned to user 'Alice'",
  );
  const queue = await app.request("POST", "/api/v1/queues", {
    headers: acme.headers,
    body: { number: "2600", name: "Sales" },
  });
  assert.is(queue.status, 201, queue.text);
  expectError(
    await create(acme, { extension: "2600", name: "Q" }),
    409,
    "Extension 2600 is already used by queue 'Sales'",
  );
  await seedIvr(app, acme.id, "Main", "2700");
  expectError(
    await create(acme, { extension: "2700", name: "I" }),
    409,
    "Extension 2700 is already used by IVR 'Main'",
  );
  assert.equal(deploysSince(app, mark), [acme.id], "only the queue save deployed");
  // Another org has its own extension space.
  const elsewhere = await create(other, { extension: "2001", name: "Alice elsewhere" });
  assert.is(elsewhere.status, 201, elsewhere.text);
});

test("POST /users: bad input is a 400 naming the field, never a 500", async () => {
  expectError(await create(acme, { name: "No ext" }), 400, "extension is required");
  expectError(
    await create(acme, { extension: "20a1", name: "X" }),
    400,
    "extension must be 2-15 digits",
  );
  expectError(
    await create(acme, { extension: "2010", name: "Eve\n[evil]" }),
    400,
    "name must be on one line (no control characters)",
  );
  expectError(
    await app.request("GET", "/api/v1/users/not-a-uuid", { headers: acme.headers }),
    400,
    "id must be a UUID",
  );
  expectError(
    await create(acme, { extension: "2010", name: "X", routing_type: "robot" }),
    400,
    "routing_type must be one of: human, ai_agent",
  );
  expectError(
    await create(acme, { extension: "2010", name: "X", sip_password: "short" }),
    400,
    "sip_password must NOT have fewer than 8 characters",
  );
  expectError(
    await create(acme, { extension: "2010", name: "X", admin: true }),
    400,
    "Unknown field: admin",
  );
  expectError(
    await create(acme, { extension: "2010", name: "X", ring_target: "phone" }),
    400,
    "phone_number required when ring_target is phone",
  );
});

test("PUT /users/{id} is partial and validates outbound_did against assigned, active DIDs", async () => {
  await seedDid(app, acme.id, "+918065978010");
  await seedDid(app, acme.id, "+918065978011", { status: "inactive" });
  await seedDid(app, other.id, "+918065978012");
  const user = (await create(acme, { extension: "2020", name: "Carol", ring_time: 50 })).body;
  const mark = app.deploys.length;
  const res = await app.request("PUT", `/api/v1/users/${user.id}`, {
    headers: acme.headers,
    body: { name: "Carol B", outbound_did: "+918065978010" },
  });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.name, "Carol B");
  assert.is(res.body.outbound_did, "+918065978010");
  assert.is(res.body.ring_time, 50, "omitted fields keep their value");
  assert.is(res.body.extension, "2020");
  assert.is(res.body.sip_password, undefined, "no new password without an extension change");
  assert.is(await storedCred(user.id), sipDigest(`${prefixOf(acme.id)}2020`, user.sip_password));
  assert.equal(deploysSince(app, mark), [acme.id]);
  for (const did of ["+918065978011", "+918065978012", "+918065978099"]) {
    expectError(
      await app.request("PUT", `/api/v1/users/${user.id}`, {
        headers: acme.headers,
        body: { outbound_did: did },
      }),
      400,
      `outbound_did ${did} is not an assigned, active DID of this org`,
    );
  }
  const cleared = await app.request("PUT", `/api/v1/users/${user.id}`, {
    headers: acme.headers,
    body: { outbound_did: null },
  });
  assert.is(cleared.body.outbound_did, null);
  expectError(
    await create(acme, { extension: "2021", name: "D", outbound_did: "+918065978011" }),
    400,
    "outbound_did +918065978011 is not an assigned, active DID of this org",
  );
});

test("PUT /users/{id}: a changed extension is re-claimed, follows into queues and gets a new password", async () => {
  const user = (await create(acme, { extension: "2030", name: "Dave" })).body;
  const queue = (
    await app.request("POST", "/api/v1/queues", {
      headers: acme.headers,
      body: {
        number: "2630",
        name: "Support",
        members: [{ extension: "2030" }],
        timeout_destination_type: "user",
        timeout_destination: "2030",
      },
    })
  ).body;
  expectError(
    await app.request("PUT", `/api/v1/users/${user.id}`, {
      headers: acme.headers,
      body: { extension: "2001" },
    }),
    409,
    "Extension 2001 is already assigned to user 'Alice'",
  );
  const res = await app.request("PUT", `/api/v1/users/${user.id}`, {
    headers: acme.headers,
    body: { extension: "2031" },
  });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.sip_username, `${prefixOf(acme.id)}2031`);
  assert.ok(res.body.sip_password, "the new password, once");
  assert.is(
    await storedCred(user.id),
    sipDigest(`${prefixOf(acme.id)}2031`, res.body.sip_password),
  );
  assert.is((await claimHolder(app, acme.id, "2030")) ?? null, null, "old extension freed");
  assert.is((await claimHolder(app, acme.id, "2031"))?.id, user.id);
  const q = await app.request("GET", `/api/v1/queues/${queue.id}`, { headers: acme.headers });
  assert.equal(q.body.members, [{ extension: "2031", penalty: 0, ring_time: 20 }]);
  assert.is(q.body.timeout_destination, "2031");
  assert.is((await create(acme, { extension: "2030", name: "Reuse" })).status, 201);
  // A caller-chosen password on an extension change is used and not echoed.
  const chosen = await app.request("PUT", `/api/v1/users/${user.id}`, {
    headers: acme.headers,
    body: { extension: "2032", sip_password: "Chosen-Secret-1" },
  });
  assert.is(chosen.body.sip_password, undefined);
  assert.is(await storedCred(user.id), sipDigest(`${prefixOf(acme.id)}2032`, "Chosen-Secret-1"));
});

test("PUT /users/{id}: a change that would break an IVR option is refused", async () => {
  const user = (await create(acme, { extension: "2040", name: "Bot", routing_type: "ai_agent" }))
    .body;
  await seedIvr(app, acme.id, "Bots", "2740", [
    { digit: "1", action_type: "ai_agent", action_destination: "2040", description: "" },
  ]);
  const mark = app.deploys.length;
  expectError(
    await app.request("PUT", `/api/v1/users/${user.id}`, {
      headers: acme.headers,
      body: { routing_type: "human" },
    }),
    400,
    "Cannot change user 'Bot': it is still used by IVR 'Bots' (user 'Bot' (2040) is not an ai_agent user)",
  );
  expectError(
    await app.request("DELETE", `/api/v1/users/${user.id}`, { headers: acme.headers }),
    400,
    "Cannot delete user 'Bot': it is still used by IVR 'Bots' (no user with extension 2040)",
  );
  assert.equal(deploysSince(app, mark), []);
});

test("DELETE /users/{id} removes the user, its memberships and its claim; the endpoint leaves pjsip.conf", async () => {
  const user = (await create(acme, { extension: "2050", name: "Erin" })).body;
  const queue = (
    await app.request("POST", "/api/v1/queues", {
      headers: acme.headers,
      body: { number: "2650", name: "Erin's", members: [{ extension: "2050" }] },
    })
  ).body;
  assert.match(
    (await compiledFiles(app, acme.id))["pjsip.conf"] ?? "",
    `${prefixOf(acme.id)}2050]`,
  );
  const mark = app.deploys.length;
  const res = await app.request("DELETE", `/api/v1/users/${user.id}`, { headers: acme.headers });
  assert.is(res.status, 204);
  assert.equal(deploysSince(app, mark), [acme.id]);
  expectError(
    await app.request("GET", `/api/v1/users/${user.id}`, { headers: acme.headers }),
    404,
    "User not found",
  );
  assert.is(await claimHolder(app, acme.id, "2050"), undefined);
  const q = await app.request("GET", `/api/v1/queues/${queue.id}`, { headers: acme.headers });
  assert.equal(q.body.members, []);
  const files = await compiledFiles(app, acme.id);
  assert.not.ok(files["pjsip.conf"]?.includes(`${prefixOf(acme.id)}2050]`));
  expectError(
    await app.request("DELETE", `/api/v1/users/${user.id}`, { headers: acme.headers }),
    404,
    "User not found",
  );
});

test("DELETE /users/{id} is refused while a DID routes to the user", async () => {
  const user = (await create(acme, { extension: "2060", name: "Frank" })).body;
  await seedDid(app, acme.id, "+918065978020", {
    routing_type: "extension",
    routing_destination: "2060",
  });
  expectError(
    await app.request("DELETE", `/api/v1/users/${user.id}`, { headers: acme.headers }),
    400,
    "Cannot delete user 'Frank': it is still used by DID +918065978020 (no user with extension 2060)",
  );
});

test("POST /users/{id}/sip-password replaces the password, shown once", async () => {
  const user = (await create(acme, { extension: "2070", name: "Gina" })).body;
  const mark = app.deploys.length;
  const res = await app.request("POST", `/api/v1/users/${user.id}/sip-password`, {
    headers: acme.headers,
  });
  assert.is(res.status, 200, res.text);
  assert.is.not(res.body.sip_password, user.sip_password);
  assert.is(
    await storedCred(user.id),
    sipDigest(`${prefixOf(acme.id)}2070`, res.body.sip_password),
  );
  assert.equal(deploysSince(app, mark), [acme.id]);
});

test("POST /users/batch: one bad row anywhere rejects all, every bad row reported by index", async () => {
  const before = await app.request("GET", "/api/v1/users", { headers: acme.headers });
  const mark = app.deploys.length;
  const res = await app.request("POST", "/api/v1/users/batch", {
    headers: acme.headers,
    body: {
      users: [
        { extension: "3001", name: "Ok one" },
        { extension: "30x", name: "Bad shape" },
        { extension: "2001", name: "Taken" },
        { extension: "3001", name: "Dup in batch" },
        { extension: "3004", name: "Ok two" },
        { extension: "3005", name: "Bad DID", outbound_did: "+10000000" },
      ],
    },
  });
  assert.is(res.status, 400, res.text);
  assert.equal(res.body.errors, [
    { index: 1, error: "extension must be 2-15 digits" },
    { index: 2, error: "Extension 2001 is already assigned to user 'Alice'" },
    { index: 3, error: "Extension 3001 is already assigned to user 'Ok one'" },
    {
      index: 5,
      error: "outbound_did +10000000 is not an assigned, active DID of this org",
    },
  ]);
  assert.match(res.body.error, /^4 of 6 rows are invalid; nothing was applied: users\[1\]: /);
  const after = await app.request("GET", "/api/v1/users", { headers: acme.headers });
  assert.equal(after.body.data, before.body.data, "nothing applied");
  assert.is(await claimHolder(app, acme.id, "3001"), undefined);
  assert.equal(deploysSince(app, mark), []);
});

test("POST /users/batch: good rows are all created in one go with one deploy", async () => {
  const mark = app.deploys.length;
  const res = await app.request("POST", "/api/v1/users/batch", {
    headers: acme.headers,
    body: {
      users: [
        { extension: "3101", name: "B1" },
        { extension: "3102", name: "B2", routing_type: "ai_agent", sip_password: "Batch-Pass-2" },
        { extension: "3103", name: "B3" },
      ],
    },
  });
  assert.is(res.status, 201, res.text);
  assert.equal(
    res.body.users.map((u: { extension: string }) => u.extension),
    ["3101", "3102", "3103"],
  );
  assert.is(res.body.users[1].sip_password, "Batch-Pass-2");
  for (const u of res.body.users) {
    assert.is(
      await storedCred(u.id),
      sipDigest(`${prefixOf(acme.id)}${u.extension}`, u.sip_password),
    );
    assert.is((await claimHolder(app, acme.id, u.extension))?.id, u.id);
  }
  assert.equal(deploysSince(app, mark), [acme.id], "exactly one deploy");
  expectError(
    await app.request("POST", "/api/v1/users/batch", {
      headers: acme.headers,
      body: { users: [] },
    }),
    400,
    "users must NOT have fewer than 1 items",
  );
});

test("POST /users/internal/bot-extensions lists active ai_agent users, internal key only", async () => {
  await create(acme, {
    extension: "3201",
    name: "Bot off",
    routing_type: "ai_agent",
    status: "inactive",
  });
  const res = await app.request("POST", "/api/v1/users/internal/bot-extensions", {
    headers: { "x-internal-key": INTERNAL_KEY },
    body: { org_id: acme.id },
  });
  assert.is(res.status, 200, res.text);
  const all = (await app.request("GET", "/api/v1/users", { headers: acme.headers })).body
    .data as Array<{
    extension: string;
    routing_type: string;
    status: string;
  }>;
  const expected = all
    .filter((u) => u.routing_type === "ai_agent" && u.status === "active")
    .map((u) => u.extension)
    .sort();
  assert.ok(expected.length >= 2);
  assert.equal(res.body, { extensions: expected });
  assert.not.ok(res.body.extensions.includes("3201"));
  const otherOrg = await app.request("POST", "/api/v1/users/internal/bot-extensions", {
    headers: { "x-internal-key": INTERNAL_KEY },
    body: { org_id: other.id },
  });
  assert.equal(otherOrg.body, { extensions: [] });
  expectError(
    await app.request("POST", "/api/v1/users/internal/bot-extensions", {
      headers: acme.headers,
      body: { org_id: acme.id },
    }),
    403,
    "Internal key required",
  );
  expectError(
    await app.request("POST", "/api/v1/users/internal/bot-extensions", {
      body: { org_id: acme.id },
    }),
    401,
    "Authentication required",
  );
  expectError(
    await app.request("POST", "/api/v1/users/internal/bot-extensions", {
      headers: { "x-internal-key": INTERNAL_KEY },
      body: { org_id: "00000000-0000-4000-8000-000000000000" },
    }),
    404,
    "Organization not found",
  );
});

test("the listing's views are built once per store generation: reused while unchanged, rebuilt after a change", async () => {
  const org = await newOrg(app, "Polled");
  await create(org, { extension: "4001", name: "First" });
  const deps = app.pbx.deps;
  // On PostgreSQL the generation is unknown while the change feed's last proof is stale (a
  // loaded machine delays its ping): nothing is cached then. The pair of reads is taken again,
  // a bounded number of times, until one known generation held across it.
  let first = await listUsers(deps, org.id);
  let again = first;
  for (let tries = 0; tries < 20; tries++) {
    await storeChangeFeed(deps.db)?.whenFollowing();
    const before = storeGeneration(deps.db);
    first = await listUsers(deps, org.id);
    again = await listUsers(deps, org.id);
    if (before !== null && storeGeneration(deps.db) === before) break;
  }
  assert.is(again, first, "an unchanged listing is not rebuilt");
  await create(org, { extension: "4002", name: "Second" });
  const second = await listUsers(deps, org.id);
  assert.is.not(second, first);
  assert.equal(
    second.map((u) => u.name),
    ["First", "Second"],
  );
  const res = await app.request("GET", "/api/v1/users", { headers: org.headers });
  assert.equal(
    (res.body as { data: { name: string }[] }).data.map((u) => u.name),
    ["First", "Second"],
  );
});

test("tenant isolation: another org's user is 403 on every route and absent from lists", async () => {
  const user = (await create(acme, { extension: "3301", name: "Private" })).body;
  const mark = app.deploys.length;
  const calls: Array<[string, string, unknown?]> = [
    ["GET", `/api/v1/users/${user.id}`],
    ["PUT", `/api/v1/users/${user.id}`, { name: "Stolen" }],
    ["DELETE", `/api/v1/users/${user.id}`],
    ["POST", `/api/v1/users/${user.id}/sip-password`],
  ];
  for (const [method, path, body] of calls) {
    const res = await app.request(method, path, {
      headers: other.headers,
      ...(body ? { body } : {}),
    });
    expectError(res, 403, "Access denied");
    assert.not.ok(res.text.includes("Private"));
  }
  const missing = "00000000-0000-4000-8000-000000000001";
  for (const [method, path] of [
    ["GET", `/api/v1/users/${missing}`],
    ["PUT", `/api/v1/users/${missing}`],
    ["DELETE", `/api/v1/users/${missing}`],
    ["POST", `/api/v1/users/${missing}/sip-password`],
  ] as const) {
    expectError(
      await app.request(method, path, {
        headers: acme.headers,
        ...(method === "PUT" ? { body: { name: "x" } } : {}),
      }),
      404,
      "User not found",
    );
  }
  const list = await app.request("GET", "/api/v1/users", { headers: other.headers });
  assert.ok(list.body.data.every((u: { id: string }) => u.id !== user.id));
  assert.not.ok(list.text.includes("Private"));
  assert.equal(deploysSince(app, mark), []);
  const still = await app.request("GET", `/api/v1/users/${user.id}`, { headers: acme.headers });
  assert.is(still.body.name, "Private");
  expectError(await app.request("GET", "/api/v1/users"), 401, "Authentication required");
});

test("concurrent creates of one extension: exactly one 201, the rest 409", async () => {
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) => create(acme, { extension: "3401", name: `Racer ${i}` })),
  );
  const statuses = results.map((r) => r.status).sort();
  assert.equal(statuses, [201, 409, 409, 409, 409, 409]);
  const winner = results.find((r) => r.status === 201)?.body;
  for (const loser of results.filter((r) => r.status === 409)) {
    assert.equal(loser.body, {
      error: `Extension 3401 is already assigned to user '${winner.name}'`,
    });
  }
  const list = await app.request("GET", "/api/v1/users", { headers: acme.headers });
  assert.is(list.body.data.filter((u: { extension: string }) => u.extension === "3401").length, 1);
});

test("the configuration the store holds compiles with the new user's endpoint", async () => {
  const res = await create(acme, {
    extension: "3501",
    name: "Compiled",
    sip_password: "Pjsip-Pass-1",
  });
  assert.is(res.status, 201);
  const pjsip = (await compiledFiles(app, acme.id))["pjsip.conf"] ?? "";
  const endpoint = `${prefixOf(acme.id)}3501`;
  assert.ok(pjsip.includes(`[${endpoint}]`), "endpoint section");
  assert.ok(
    pjsip.includes(`password_digest=md5:${sipDigest(endpoint, "Pjsip-Pass-1")}`),
    "auth with the stored digest",
  );
  assert.not.ok(pjsip.includes("Pjsip-Pass-1"), "never the plaintext");
  const extensions = (await compiledFiles(app, acme.id))["extensions.conf"] ?? "";
  assert.ok(extensions.includes("3501"), "the dialplan reaches it");
});

test.run();
