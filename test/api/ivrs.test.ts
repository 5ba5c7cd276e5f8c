// /ivrs: CRUD with SPEC.md §2 defaults, the §7 messages, extension collisions across IVRs, users
// and queues, the atomic menu replacement, publish, tenant isolation (404 `IVR not found`) and
// the concurrency rules of §7.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectError, startTestApp, type TestApp } from "./helpers.js";
import { fakeSpeechEngine } from "./ivrs-helpers.js";
import { claimHolder, compiledFiles, newOrg, seedDid, type TestOrg } from "./users-helpers.js";

let app: TestApp;
let acme: TestOrg;
let other: TestOrg;

test.before(async () => {
  app = await startTestApp();
  app.pbx.deps.speechEngine = fakeSpeechEngine();
  acme = await newOrg(app, "Acme");
  other = await newOrg(app, "Other");
});

test.after(async () => {
  await app.close();
});

const NOT_FOUND = "IVR not found";

function createIvr(body: Record<string, unknown>, org = acme) {
  return app.request("POST", "/api/v1/ivrs", { headers: org.headers, body });
}

async function newIvr(body: Record<string, unknown>, org = acme): Promise<string> {
  const res = await createIvr(body, org);
  assert.is(res.status, 201, res.text);
  return res.body.id as string;
}

function putMenu(id: string, options: unknown[], org = acme) {
  return app.request("PUT", `/api/v1/ivrs/${id}/menu`, { headers: org.headers, body: { options } });
}

async function newUser(body: Record<string, unknown>, org = acme): Promise<string> {
  const res = await app.request("POST", "/api/v1/users", { headers: org.headers, body });
  assert.is(res.status, 201, res.text);
  return res.body.id as string;
}

async function newQueue(body: Record<string, unknown>, org = acme): Promise<string> {
  const res = await app.request("POST", "/api/v1/queues", { headers: org.headers, body });
  assert.is(res.status, 201, res.text);
  return res.body.id as string;
}

test("POST /ivrs applies the SPEC defaults, answers 201 and schedules the org's deploy", async () => {
  const mark = app.deploys.length;
  const res = await createIvr({ name: "Main", extension: "500" });
  assert.is(res.status, 201, res.text);
  const { id, created_at, updated_at, ...rest } = res.body;
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.ok(created_at && updated_at);
  assert.equal(rest, {
    name: "Main",
    extension: "500",
    description: "",
    timeout: 10,
    max_retries: 3,
    status: "active",
    greeting_language: "en-IN",
    greeting_voice: "en-IN-Wavenet-D",
    greeting_prompt: null,
    direct_extension_dial: false,
    menuOptions: [],
  });
  assert.equal(app.deploys.slice(mark), [acme.id]);
  assert.equal(await claimHolder(app, acme.id, "500"), { type: "ivr", id, name: "Main" });
});

test("POST /ivrs: null means default, 0 is stored as 0, negatives are refused", async () => {
  const nulls = await createIvr({
    name: "Nulls",
    extension: "501",
    timeout: null,
    max_retries: null,
  });
  assert.is(nulls.status, 201, nulls.text);
  assert.is(nulls.body.timeout, 10);
  assert.is(nulls.body.max_retries, 3);
  const zeros = await createIvr({ name: "Zeros", extension: "502", timeout: 0, max_retries: 0 });
  assert.is(zeros.status, 201, zeros.text);
  const stored = await app.request("GET", `/api/v1/ivrs/${zeros.body.id}`, {
    headers: acme.headers,
  });
  assert.is(stored.body.timeout, 0);
  assert.is(stored.body.max_retries, 0);
  expectError(
    await createIvr({ name: "Neg", extension: "503", timeout: -1 }),
    400,
    "timeout must be >= 0",
  );
  expectError(
    await createIvr({ name: "Neg", extension: "503", max_retries: -2 }),
    400,
    "max_retries must be >= 0",
  );
  // The update path holds the same rule.
  expectError(
    await app.request("PUT", `/api/v1/ivrs/${zeros.body.id}`, {
      headers: acme.headers,
      body: { timeout: -5 },
    }),
    400,
    "timeout must be >= 0",
  );
});

test("POST /ivrs sets every field it is given", async () => {
  const res = await createIvr({
    name: "Hindi",
    extension: "504",
    description: "Hindi menu",
    timeout: 7,
    max_retries: 1,
    status: "inactive",
    greeting_language: "hi-IN",
    greeting_voice: "hi-IN-Wavenet-B",
    direct_extension_dial: true,
  });
  assert.is(res.status, 201, res.text);
  assert.is(res.body.description, "Hindi menu");
  assert.is(res.body.timeout, 7);
  assert.is(res.body.max_retries, 1);
  assert.is(res.body.status, "inactive");
  assert.is(res.body.greeting_language, "hi-IN");
  assert.is(res.body.greeting_voice, "hi-IN-Wavenet-B");
  assert.is(res.body.direct_extension_dial, true);
  // A language alone takes its default voice; an unknown voice is a 400 naming the choices.
  const tamil = await createIvr({ name: "Tamil", extension: "505", greeting_language: "ta-IN" });
  assert.is(tamil.body.greeting_voice, "ta-IN-Wavenet-A");
  expectError(
    await createIvr({
      name: "Bad",
      extension: "506",
      greeting_language: "ta-IN",
      greeting_voice: "x",
    }),
    400,
    "Unknown voice 'x' for language ta-IN; available: ta-IN-Wavenet-A, ta-IN-Wavenet-B",
  );
});

test("POST /ivrs without name or extension: 400 `name and extension required`", async () => {
  for (const body of [
    {},
    { name: "Only name" },
    { extension: "510" },
    { name: "", extension: "510" },
    { name: "Blank ext", extension: "" },
    { name: null, extension: "510" },
    { name: "   ", extension: "510" },
  ]) {
    expectError(await createIvr(body), 400, "name and extension required");
  }
  expectError(
    await createIvr({ name: "Short", extension: "5" }),
    400,
    "extension must be 2-15 digits",
  );
  const injected = await createIvr({ name: "Evil\n[evil]", extension: "511" });
  assert.is(injected.status, 400, injected.text);
  assert.is(await claimHolder(app, acme.id, "511"), undefined);
});

test("extension collisions answer the three SPEC §7 409s, on create and on update", async () => {
  await newIvr({ name: "Sales IVR", extension: "520" });
  await newUser({ extension: "521", name: "Alice" });
  await newQueue({ number: "522", name: "Support" });
  expectError(
    await createIvr({ name: "X", extension: "520" }),
    409,
    "Extension 520 is already used by IVR 'Sales IVR'",
  );
  expectError(
    await createIvr({ name: "X", extension: "521" }),
    409,
    "Extension 521 is already assigned to user 'Alice'",
  );
  expectError(
    await createIvr({ name: "X", extension: "522" }),
    409,
    "Extension 522 is already used by queue 'Support'",
  );
  const id = await newIvr({ name: "Mover", extension: "523" });
  for (const [extension, message] of [
    ["520", "Extension 520 is already used by IVR 'Sales IVR'"],
    ["521", "Extension 521 is already assigned to user 'Alice'"],
    ["522", "Extension 522 is already used by queue 'Support'"],
  ] as const) {
    expectError(
      await app.request("PUT", `/api/v1/ivrs/${id}`, {
        headers: acme.headers,
        body: { extension },
      }),
      409,
      message,
    );
  }
  // The same extension in another org is free.
  await newIvr({ name: "Theirs", extension: "520" }, other);
});

test("PUT /ivrs/{id} is partial; a new extension moves the claim", async () => {
  const id = await newIvr({
    name: "Partial",
    extension: "530",
    description: "keep me",
    timeout: 0,
    greeting_language: "bn-IN",
  });
  const mark = app.deploys.length;
  const res = await app.request("PUT", `/api/v1/ivrs/${id}`, {
    headers: acme.headers,
    body: { name: "Renamed", extension: "531" },
  });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.name, "Renamed");
  assert.is(res.body.extension, "531");
  assert.is(res.body.description, "keep me");
  assert.is(res.body.timeout, 0);
  assert.is(res.body.max_retries, 3);
  assert.is(res.body.greeting_language, "bn-IN");
  assert.is(res.body.greeting_voice, "bn-IN-Wavenet-A");
  assert.equal(app.deploys.slice(mark), [acme.id]);
  assert.is(await claimHolder(app, acme.id, "530"), undefined);
  assert.equal((await claimHolder(app, acme.id, "531"))?.name, "Renamed");
  // The old number is free for a user now.
  await newUser({ extension: "530", name: "Takes 530" });
  // Changing only the language picks that language's default voice.
  const lang = await app.request("PUT", `/api/v1/ivrs/${id}`, {
    headers: acme.headers,
    body: { greeting_language: "en-US", status: "inactive" },
  });
  assert.is(lang.status, 200, lang.text);
  assert.is(lang.body.greeting_voice, "en-US-Wavenet-A");
  // A voice alone brings its own language.
  const voiceOnly = await app.request("PUT", `/api/v1/ivrs/${id}`, {
    headers: acme.headers,
    body: { greeting_voice: "gu-IN-Wavenet-B" },
  });
  assert.is(voiceOnly.status, 200, voiceOnly.text);
  assert.is(voiceOnly.body.greeting_language, "gu-IN");
  assert.is(voiceOnly.body.greeting_voice, "gu-IN-Wavenet-B");
  assert.is(lang.body.status, "inactive");
  assert.is(lang.body.name, "Renamed");
  expectError(
    await app.request("PUT", `/api/v1/ivrs/${id}`, { headers: acme.headers, body: { name: "" } }),
    400,
    "name must not be empty",
  );
  expectError(
    await app.request("PUT", `/api/v1/ivrs/${id}`, {
      headers: acme.headers,
      body: { bogus: 1 },
    }),
    400,
    "Unknown field: bogus",
  );
});

test("GET /ivrs lists only the caller's IVRs, with menuOptions nested in order", async () => {
  const mine = await newIvr({ name: "Listed", extension: "540" });
  await newUser({ extension: "541", name: "Bob" });
  const menu = await putMenu(mine, [
    { digit: "9", action_type: "hangup" },
    { digit: "1", action_type: "extension", action_destination: "541", description: "Bob" },
  ]);
  assert.is(menu.status, 200, menu.text);
  const theirs = await newIvr({ name: "Hidden", extension: "540" }, other);
  const list = await app.request("GET", "/api/v1/ivrs", { headers: acme.headers });
  assert.is(list.status, 200, list.text);
  const ids = list.body.map((i: { id: string }) => i.id);
  assert.ok(ids.includes(mine));
  assert.not.ok(ids.includes(theirs));
  const listed = list.body.find((i: { id: string }) => i.id === mine);
  assert.equal(listed.menuOptions, [
    { digit: "9", action_type: "hangup", action_destination: null, description: "" },
    { digit: "1", action_type: "extension", action_destination: "541", description: "Bob" },
  ]);
  const otherList = await app.request("GET", "/api/v1/ivrs", { headers: other.headers });
  const otherIds = otherList.body.map((i: { id: string }) => i.id);
  assert.ok(otherIds.includes(theirs));
  assert.not.ok(otherIds.includes(mine));
  expectError(await app.request("GET", "/api/v1/ivrs"), 401, "Authentication required");
  expectError(
    await app.request("POST", "/api/v1/ivrs", { body: { name: "x", extension: "599" } }),
    401,
    "Authentication required",
  );
});

test("another org's IVR (and an unknown id) is 404 `IVR not found` on every route", async () => {
  const id = await newIvr({ name: "Private", extension: "550" });
  const before = await app.request("GET", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  const mark = app.deploys.length;
  const attempts: Array<[string, string, unknown]> = [
    ["GET", "", undefined],
    ["PUT", "", { name: "Stolen" }],
    ["DELETE", "", undefined],
    ["PUT", "/menu", { options: [{ digit: "1", action_type: "hangup" }] }],
    ["POST", "/publish", undefined],
    ["POST", "/generate-greeting", { text: "hello" }],
    ["GET", "/greeting-audio", undefined],
  ];
  for (const [method, suffix, body] of attempts) {
    for (const target of [id, "00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
      const res = await app.request(method, `/api/v1/ivrs/${target}${suffix}`, {
        headers: other.headers,
        ...(body !== undefined ? { body } : {}),
      });
      expectError(res, 404, NOT_FOUND);
    }
  }
  assert.equal(app.deploys.slice(mark), []);
  const after = await app.request("GET", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  assert.equal(after.body, before.body);
});

test("PUT /ivrs/{id}/menu replaces every option atomically and answers them in order", async () => {
  await newUser({ extension: "561", name: "Carol" });
  await newUser({ extension: "562", name: "Robo", routing_type: "ai_agent" });
  const queue = await newQueue({ number: "563", name: "Help" });
  const target = await newIvr({ name: "Sub menu", extension: "564" });
  const id = await newIvr({ name: "Menu", extension: "560" });
  const robo = (
    await app.request("GET", "/api/v1/users", { headers: acme.headers })
  ).body.data.find((u: { extension: string }) => u.extension === "562").id;
  const options = [
    { digit: "#", action_type: "hangup", description: "bye" },
    { digit: "1", action_type: "extension", action_destination: "561", description: "Carol" },
    { digit: "2", action_type: "queue", action_destination: queue, description: "Help desk" },
    { digit: "3", action_type: "ivr", action_destination: target, description: "More" },
    { digit: "4", action_type: "ai_agent", action_destination: robo, description: "Bot" },
    { digit: "5", action_type: "voicemail", action_destination: "561", description: "VM" },
    { digit: "6", action_type: "callback", action_destination: "+919876543210", description: "" },
    { digit: 7, action_type: "queue", action_destination: "563" },
  ];
  const mark = app.deploys.length;
  const res = await putMenu(id, options);
  assert.is(res.status, 200, res.text);
  assert.equal(
    res.body.options.map((o: { digit: string }) => o.digit),
    ["#", "1", "2", "3", "4", "5", "6", "7"],
  );
  assert.equal(res.body.options[0], {
    digit: "#",
    action_type: "hangup",
    action_destination: null,
    description: "bye",
  });
  assert.equal(app.deploys.slice(mark), [acme.id]);
  const stored = await app.request("GET", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  assert.equal(stored.body.menuOptions, res.body.options);

  // A second replacement leaves nothing of the first.
  const second = await putMenu(id, [{ digit: "0", action_type: "hangup" }]);
  assert.is(second.status, 200, second.text);
  const after = await app.request("GET", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  assert.equal(
    after.body.menuOptions.map((o: { digit: string }) => o.digit),
    ["0"],
  );
  // An empty menu is allowed.
  assert.equal((await putMenu(id, [])).body, { options: [] });
});

test("menu rules answer the SPEC §7 messages and change nothing", async () => {
  await newUser({ extension: "571", name: "Dave" });
  const id = await newIvr({ name: "Strict", extension: "570" });
  assert.is((await putMenu(id, [{ digit: "1", action_type: "hangup" }])).status, 200);
  const thirteen = [..."0123456789*#", "1"].map((digit) => ({ digit, action_type: "hangup" }));
  const cases: Array<[unknown[], string]> = [
    [[{ digit: "A", action_type: "hangup" }], "Invalid digit: A"],
    [[{ digit: 12, action_type: "hangup" }], "Invalid digit: 12"],
    [[{ digit: "1", action_type: "transfer" }], "Invalid action_type: transfer"],
    [[{ digit: "1", action_type: "queue" }], "action_destination required for action_type=queue"],
    [
      [{ digit: "1", action_type: "extension", action_destination: "" }],
      "action_destination required for action_type=extension",
    ],
    [
      [{ digit: "1", action_type: "callback", action_destination: null }],
      "action_destination required for action_type=callback",
    ],
    [thirteen, "at most 12 options per IVR (one per digit), found 13"],
    [
      [
        { digit: "1", action_type: "hangup" },
        { digit: "1", action_type: "hangup" },
      ],
      "digit 1 is already used by options[0]",
    ],
    [
      [{ digit: "1", action_type: "extension", action_destination: "579" }],
      "no user with extension 579",
    ],
    [
      [{ digit: "1", action_type: "ivr", action_destination: id }],
      "an IVR option cannot go to its own IVR",
    ],
    [
      [{ digit: "1", action_type: "ai_agent", action_destination: "571" }],
      "user 'Dave' (571) is not an ai_agent user",
    ],
    [
      [{ digit: "1", action_type: "voicemail", action_destination: "abc" }],
      "voicemail mailbox must be digits, got abc",
    ],
    [
      [{ digit: "1", action_type: "callback", action_destination: "12" }],
      "Phone number 12 does not look like a valid number (need 7-15 digits)",
    ],
  ];
  const mark = app.deploys.length;
  for (const [options, message] of cases) {
    expectError(await putMenu(id, options), 400, message);
  }
  expectError(
    await app.request("PUT", `/api/v1/ivrs/${id}/menu`, { headers: acme.headers, body: {} }),
    400,
    "options is required",
  );
  assert.equal(app.deploys.slice(mark), []);
  const stored = await app.request("GET", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  assert.equal(stored.body.menuOptions, [
    { digit: "1", action_type: "hangup", action_destination: null, description: "" },
  ]);
  // Twelve distinct digits is the most, and allowed.
  const twelve = [..."0123456789*#"].map((digit) => ({ digit, action_type: "hangup" }));
  assert.is((await putMenu(id, twelve)).status, 200);
});

test("POST /ivrs/{id}/publish answers {success: true} and schedules the whole org", async () => {
  const id = await newIvr({ name: "Pub", extension: "580" });
  const mark = app.deploys.length;
  const res = await app.request("POST", `/api/v1/ivrs/${id}/publish`, { headers: acme.headers });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { success: true });
  assert.equal(app.deploys.slice(mark), [acme.id]);
});

test("DELETE /ivrs/{id}: 204, options gone, extension released, deploy scheduled", async () => {
  const id = await newIvr({ name: "Doomed", extension: "590" });
  assert.is((await putMenu(id, [{ digit: "1", action_type: "hangup" }])).status, 200);
  const mark = app.deploys.length;
  const res = await app.request("DELETE", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  assert.is(res.status, 204, res.text);
  assert.is(res.text, "");
  assert.equal(app.deploys.slice(mark), [acme.id]);
  expectError(
    await app.request("GET", `/api/v1/ivrs/${id}`, { headers: acme.headers }),
    404,
    NOT_FOUND,
  );
  const orphans = await app.db
    .selectFrom("ivr_options")
    .select("id")
    .where("ivr_id", "=", id)
    .execute();
  assert.equal(orphans, []);
  assert.is(await claimHolder(app, acme.id, "590"), undefined);
  await newIvr({ name: "Reuses 590", extension: "590" });
});

test("DELETE of an IVR a DID routes to is refused with 400 and keeps it", async () => {
  const id = await newIvr({ name: "Routed", extension: "591" });
  await seedDid(app, acme.id, "+918065978011", { routing_type: "ivr", routing_destination: id });
  const res = await app.request("DELETE", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  assert.is(res.status, 400, res.text);
  assert.match(
    res.body.error,
    /^Cannot delete IVR 'Routed': it is still used by DID \+918065978011 \(/,
  );
  assert.is(
    (await app.request("GET", `/api/v1/ivrs/${id}`, { headers: acme.headers })).status,
    200,
  );
});

test("of concurrent creates with one extension exactly one gets 201, the rest 409", async () => {
  const results = await Promise.all(
    [1, 2, 3, 4, 5].map((n) => createIvr({ name: `Race ${n}`, extension: "600" })),
  );
  const created = results.filter((r) => r.status === 201);
  assert.is(created.length, 1, results.map((r) => `${r.status} ${r.text}`).join("\n"));
  const winner = created[0]?.body.name;
  for (const res of results.filter((r) => r.status !== 201)) {
    expectError(res, 409, `Extension 600 is already used by IVR '${winner}'`);
  }
  const list = await app.request("GET", "/api/v1/ivrs", { headers: acme.headers });
  assert.is(list.body.filter((i: { extension: string }) => i.extension === "600").length, 1);
});

test("five concurrent menu replacements all succeed and one of them is the final state", async () => {
  const id = await newIvr({ name: "Busy", extension: "610" });
  const menus = [0, 1, 2, 3, 4].map((n) =>
    [..."0123456789"].slice(0, n + 2).map((digit) => ({
      digit,
      action_type: "hangup",
      description: `write ${n}`,
    })),
  );
  const results = await Promise.all(menus.map((menu) => putMenu(id, menu)));
  for (const res of results) assert.is(res.status, 200, res.text);
  const stored = await app.request("GET", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  const final = stored.body.menuOptions;
  assert.ok(
    menus.some(
      (menu) =>
        JSON.stringify(menu.map((o) => ({ ...o, action_destination: null }))) ===
        JSON.stringify(
          final.map((o: Record<string, unknown>) => ({
            digit: o.digit,
            action_type: o.action_type,
            description: o.description,
            action_destination: o.action_destination,
          })),
        ),
    ),
    JSON.stringify(final),
  );
  assert.is(new Set(final.map((o: { description: string }) => o.description)).size, 1);
});

test("the store's state compiles to the IVR's menu context and its greeting", async () => {
  await newUser({ extension: "621", name: "Erin" });
  const id = await newIvr({ name: "Compiled", extension: "620", timeout: 0 });
  assert.is(
    (await putMenu(id, [{ digit: "1", action_type: "extension", action_destination: "621" }]))
      .status,
    200,
  );
  const greeting = await app.request("POST", `/api/v1/ivrs/${id}/generate-greeting`, {
    headers: acme.headers,
    body: { text: "Welcome to Acme" },
  });
  assert.is(greeting.status, 200, greeting.text);
  const dialplan = (await compiledFiles(app, acme.id))["extensions.conf"] ?? "";
  const prefix = (
    await app.db
      .selectFrom("organizations")
      .select("context_prefix")
      .where("id", "=", acme.id)
      .executeTakeFirstOrThrow()
  ).context_prefix;
  assert.ok(dialplan.includes(`[${prefix}ivrm_620]`), dialplan);
  assert.ok(dialplan.includes(`Background(greetings/greeting_ivr_${id})`), dialplan);
  assert.ok(dialplan.includes("WaitExten(0)"), dialplan);
  assert.match(dialplan, new RegExp(`exten => 1,1,.*${prefix}internal,621`));
});

test.run();
