// `/time-conditions` (issue 27 item 6): CRUD with the model's fields and defaults, the rules
// beyond the schema with their exact messages (time zone, ranges, dates, destinations), routing
// a DID, an IVR option and a queue timeout to a schedule, deletion and renames refused while
// something routes to it, hostile values refused before they could reach the dialplan,
// pagination, deploys and tenant isolation.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileOrg } from "../../src/compiler/index.js";
import { loadOrgState } from "../../src/store/load-org-state.js";
import { assertDocumented, outboxRows } from "../calls/outbox-rows.js";
import { orgKey, type TestOrg } from "./dids-fixtures.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let acme: TestOrg;
let beta: TestOrg;

test.before(async () => {
  app = await startTestApp();
  acme = await app.createOrg("Acme");
  beta = await app.createOrg("Beta");
  const user = await call(acme, "POST", "/users", { extension: "1001", name: "Alice" });
  assert.is(user.status, 201, user.text);
  const queue = await call(acme, "POST", "/queues", { number: "600", name: "Sales" });
  assert.is(queue.status, 201, queue.text);
});
test.after(async () => app.close());

const call = (org: TestOrg, method: string, path: string, body?: unknown) =>
  app.request(method, `/api/v1${path}`, {
    headers: orgKey(org),
    ...(body !== undefined ? { body } : {}),
  });

const office = (overrides: Record<string, unknown> = {}) => ({
  name: "office",
  time_zone: "Europe/London",
  ranges: [{ days: ["mon", "tue", "wed", "thu", "fri"], start: "09:00", end: "17:30" }],
  open_destination_type: "queue",
  open_destination: "600",
  closed_destination_type: "voicemail",
  closed_destination: "1001",
  ...overrides,
});

test("create with defaults, read, list; the schedule compiles to GotoIfTime in its zone", async () => {
  app.deploys.length = 0;
  const res = await call(acme, "POST", "/time-conditions", office());
  assert.is(res.status, 201, res.text);
  assert.equal(
    { ...res.body, id: undefined },
    {
      id: undefined,
      name: "office",
      description: "",
      time_zone: "Europe/London",
      ranges: [{ days: ["mon", "tue", "wed", "thu", "fri"], start: "09:00", end: "17:30" }],
      exceptions: [],
      open_destination_type: "queue",
      open_destination: "600",
      closed_destination_type: "voicemail",
      closed_destination: "1001",
    },
  );
  assert.equal(app.deploys, [acme.id]);
  const one = await call(acme, "GET", `/time-conditions/${res.body.id}`);
  assert.equal(one.body, res.body);
  const list = await call(acme, "GET", "/time-conditions");
  assert.is(list.status, 200);
  assert.equal(list.body.data, [res.body]);
  assert.is(list.headers.get("x-total-count"), "1");

  const { files } = compileOrg(await loadOrgState(app.db, acme.id));
  const dialplan = files.find((f) => f.path.endsWith("/extensions.conf"))?.content ?? "";
  assert.match(dialplan, "GotoIfTime(09:00-17:29,mon-fri,*,*,Europe/London?open,1)");
  await call(acme, "DELETE", `/time-conditions/${res.body.id}`);
});

test("updates are partial; ranges and exceptions are replaced whole", async () => {
  const { id } = (await call(acme, "POST", "/time-conditions", office({ name: "partial" }))).body;
  app.deploys.length = 0;
  const res = await call(acme, "PUT", `/time-conditions/${id}`, {
    exceptions: [{ name: "Christmas", start_date: "2026-12-24", end_date: "2026-12-26" }],
    closed_destination_type: "hangup",
    closed_destination: null,
  });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body.exceptions, [
    {
      name: "Christmas",
      start_date: "2026-12-24",
      end_date: "2026-12-26",
      destination_type: null,
      destination: null,
    },
  ]);
  assert.is(res.body.closed_destination_type, "hangup");
  assert.is(res.body.time_zone, "Europe/London", "omitted fields keep their value");
  assert.is(res.body.ranges.length, 1);
  assert.equal(app.deploys, [acme.id]);
  const ranges = [{ days: ["sat"], start: "10:00", end: "13:00" }];
  const replaced = await call(acme, "PUT", `/time-conditions/${id}`, { ranges });
  assert.equal(replaced.body.ranges, ranges);
  assert.is(replaced.body.exceptions.length, 1);
  assert.is((await call(acme, "DELETE", `/time-conditions/${id}`)).status, 204);
});

test("rules beyond the schema: exact messages", async () => {
  const post = (body: unknown) => call(acme, "POST", "/time-conditions", body);
  await post(office({ name: "taken" }));
  expectError(await post(office({ name: "taken" })), 409, "Time condition 'taken' already exists");
  expectError(
    await post(office({ name: "tz", time_zone: "Mars/Olympus" })),
    400,
    "unknown time zone Mars/Olympus",
  );
  expectError(
    await post(office({ name: "same", ranges: [{ days: ["mon"], start: "09:00", end: "09:00" }] })),
    400,
    "a range cannot end when it starts (for a whole day, use 00:00 to 24:00)",
  );
  expectError(
    await post(office({ name: "late", ranges: [{ days: ["mon"], start: "24:00", end: "09:00" }] })),
    400,
    "24:00 can only end a range",
  );
  expectError(
    await post(office({ name: "feb", exceptions: [{ start_date: "2026-02-30" }] })),
    400,
    "no such date 2026-02-30",
  );
  expectError(
    await post(
      office({ name: "back", exceptions: [{ start_date: "2026-12-26", end_date: "2026-12-24" }] }),
    ),
    400,
    "end_date is before start_date",
  );
  expectError(
    await post(
      office({ name: "nobody", open_destination_type: "extension", open_destination: "4242" }),
    ),
    400,
    "no user with extension 4242",
  );
  expectError(
    await post(office({ name: "empty", closed_destination: null })),
    400,
    "closed_destination required for closed_destination_type=voicemail",
  );
  const rows = (await call(acme, "GET", "/time-conditions")).body.data;
  assert.equal(
    rows.map((r: { name: string }) => r.name),
    ["taken"],
    "nothing refused was stored",
  );
});

test("hostile values are refused by the schema before any dialplan is written", async () => {
  const hostile = [",", ")", ";", "\n", "${SHELL(id)}", "Europe/London,mon", "a)?x:y"];
  app.deploys.length = 0;
  for (const value of hostile) {
    for (const body of [
      office({ name: "h", time_zone: value }),
      office({ name: value }),
      office({ name: "h", ranges: [{ days: ["mon"], start: value, end: "10:00" }] }),
      office({ name: "h", exceptions: [{ start_date: value }] }),
    ]) {
      const res = await call(acme, "POST", "/time-conditions", body);
      assert.is(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.type(res.body.error, "string");
    }
  }
  const res = await call(
    acme,
    "POST",
    "/time-conditions",
    office({ name: "h", time_zone: "Europe/London;x" }),
  );
  expectError(res, 400, "time_zone must be an IANA time zone name, such as Europe/London");
  assert.equal(app.deploys, [], "nothing was saved");
});

test("DIDs, IVR options and queue timeouts route to a schedule; it cannot be deleted or renamed while used", async () => {
  const tc = (await call(acme, "POST", "/time-conditions", office({ name: "routed" }))).body;
  const did = await call(acme, "POST", "/dids", {
    number: "+918065978101",
    routing_type: "time_condition",
    routing_destination: tc.id,
  });
  assert.is(did.status, 201, did.text);
  assert.is(did.body.routing_destination, "routed", "stored by name, however it was named");
  expectError(
    await call(acme, "DELETE", `/time-conditions/${tc.id}`),
    400,
    "Cannot delete time condition 'routed': it is still used by DID +918065978101 (no time condition named routed)",
  );
  expectError(
    await call(acme, "PUT", `/time-conditions/${tc.id}`, { name: "renamed" }),
    400,
    "Cannot change time condition 'routed': it is still used by DID +918065978101 (no time condition named routed)",
  );
  const ivr = await call(acme, "POST", "/ivrs", { name: "Main", extension: "500" });
  assert.is(ivr.status, 201, ivr.text);
  const menu = await call(acme, "PUT", `/ivrs/${ivr.body.id}/menu`, {
    options: [{ digit: "1", action_type: "time_condition", action_destination: "routed" }],
  });
  assert.is(menu.status, 200, menu.text);
  const queue = await call(acme, "POST", "/queues", {
    number: "601",
    name: "Support",
    timeout_destination_type: "time_condition",
    timeout_destination: "routed",
  });
  assert.is(queue.status, 201, queue.text);
  expectError(
    await call(acme, "POST", "/queues", {
      number: "602",
      name: "Nowhere",
      timeout_destination_type: "time_condition",
      timeout_destination: "missing",
    }),
    400,
    "no time condition named missing",
  );
  const { files } = compileOrg(await loadOrgState(app.db, acme.id));
  const dialplan = files.find((f) => f.path.endsWith("/extensions.conf"))?.content ?? "";
  const context = `org_${acme.id}_tc_routed`;
  assert.match(dialplan, `[${context}]`);
  assert.ok(dialplan.split(`Goto(${context},s,1)`).length - 1 === 3, "DID, option and queue");
  await call(acme, "DELETE", `/dids/${did.body.id}`);
  await call(acme, "DELETE", `/ivrs/${ivr.body.id}`);
  await call(acme, "DELETE", `/queues/${queue.body.id}`);
  assert.is((await call(acme, "DELETE", `/time-conditions/${tc.id}`)).status, 204);
});

test("time_condition.* webhook events are written with the change, documented; a refused change writes none", async () => {
  app.pbx.deps.config.webhookAllowPrivate = true;
  try {
    const hook = await call(beta, "POST", "/webhooks", {
      url: "http://127.0.0.1:9/hook",
      events: ["time_condition.created", "time_condition.updated", "time_condition.deleted"],
    });
    assert.is(hook.status, 201, hook.text);
  } finally {
    app.pbx.deps.config.webhookAllowPrivate = false;
  }
  const body = {
    name: "hooked",
    time_zone: "Asia/Kolkata",
    open_destination_type: "hangup",
    closed_destination_type: "hangup",
  };
  const tc = (await call(beta, "POST", "/time-conditions", body)).body;
  const refused = await call(beta, "PUT", `/time-conditions/${tc.id}`, {
    time_zone: "Mars/Olympus",
  });
  assert.is(refused.status, 400);
  await call(beta, "PUT", `/time-conditions/${tc.id}`, { description: "night line" });
  assert.is((await call(beta, "DELETE", `/time-conditions/${tc.id}`)).status, 204);
  const rows = await outboxRows(app.db, beta.id);
  assert.equal(
    rows.map(([event]) => event),
    ["time_condition.created", "time_condition.updated", "time_condition.deleted"],
  );
  assertDocumented(rows);
  const [created, updated, deleted] = rows.map(
    ([, data]) => data.time_condition as { id: string; description: string },
  );
  assert.is(created!.id, tc.id);
  assert.is(updated!.description, "night line");
  assert.is(deleted!.description, "night line", "what it was");
});

test("pagination: limit and offset over the names' order", async () => {
  for (const name of ["p-c", "p-a", "p-b"]) {
    await call(beta, "POST", "/time-conditions", {
      name,
      time_zone: "Asia/Kolkata",
      open_destination_type: "hangup",
      closed_destination_type: "hangup",
    });
  }
  const page = await call(beta, "GET", "/time-conditions?limit=2&offset=1");
  assert.is(page.status, 200, page.text);
  assert.equal(
    page.body.data.map((r: { name: string }) => r.name),
    ["p-b", "p-c"],
  );
  assert.equal(page.body.pagination, { total: 3, limit: 2, offset: 1 });
});

test("tenant isolation: another org's time condition is 403 on every route and never listed", async () => {
  const mine = (await call(acme, "POST", "/time-conditions", office({ name: "private" }))).body;
  const list = await call(beta, "GET", "/time-conditions");
  assert.ok(!list.text.includes(mine.id));
  app.deploys.length = 0;
  const path = `/time-conditions/${mine.id}`;
  expectError(await call(beta, "GET", path), 403, "Access denied");
  expectError(await call(beta, "PUT", path, { description: "x" }), 403, "Access denied");
  expectError(await call(beta, "DELETE", path), 403, "Access denied");
  assert.equal(app.deploys, []);
  assert.is((await call(acme, "GET", path)).body.description, "");
  // Routing to another org's schedule by id finds nothing in the caller's org.
  expectError(
    await call(beta, "POST", "/dids", {
      number: "+918065978102",
      routing_type: "time_condition",
      routing_destination: mine.id,
    }),
    400,
    `no time condition named ${mine.id}`,
  );
  const missing = "00000000-0000-4000-8000-000000000000";
  expectError(
    await call(acme, "GET", `/time-conditions/${missing}`),
    404,
    "Time condition not found",
  );
  expectError(
    await call(acme, "DELETE", `/time-conditions/${missing}`),
    404,
    "Time condition not found",
  );
});

test.run();
