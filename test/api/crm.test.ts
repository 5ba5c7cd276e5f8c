// `/crm/*` on the real app (loopback port, fresh SQLite file): leads and clients, custom fields,
// search, filters and pagination, conversion, a record's calls, tenant isolation, the crm.*
// permission matrix of `ak_` keys, and the crm.* events delivered signed to a real receiver.
import { createHmac } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { API_KEY_PERMISSIONS, type ApiKeyPermission } from "../../src/domain/access/permissions.js";
import { sealWithKey } from "../../src/domain/webhooks/webhook-service.js";
import { foldIntoCall, insertCallRecord } from "../../src/store/call-record-repository.js";
import type { NewCallRecordRow } from "../../src/store/call-tables.js";
import { createDispatcher } from "../../src/webhooks/dispatcher.js";
import { createNodeHttpClient } from "../../src/webhooks/http-client.js";
import { assertDocumented, type OutboxRow, outboxRows } from "../calls/outbox-rows.js";
import { startReceiver } from "../webhooks/helpers.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

async function setup() {
  const app = await startTestApp();
  const acme = await app.createOrg("Acme");
  const other = await app.createOrg("Other");
  const as = (key: string) => ({ "x-api-key": key });
  return {
    app,
    acme: as(acme.api_key),
    other: as(other.api_key),
    acmeId: acme.id,
    otherId: other.id,
  };
}

async function post(app: TestApp, path: string, headers: Record<string, string>, body: unknown) {
  const res = await app.request("POST", `/api/v1${path}`, { headers, body });
  assert.is(res.status, 201, res.text);
  return res.body;
}

test("leads: create, normalise, validate, update, delete, and another org's lead is 403", async () => {
  const { app, acme, other } = await setup();
  try {
    const lead = await post(app, "/crm/leads", acme, {
      name: "Asha Rao",
      phone: "080 6597 8001",
      email: "Asha@Example.com",
      company: "Rao Traders",
      tags: ["vip", "vip", "q3"],
      notes: "met at the fair\nwants a demo",
    });
    assert.is(lead.phone, "+918065978001");
    assert.is(lead.email, "asha@example.com");
    assert.is(lead.status, "new");
    assert.equal(lead.tags, ["vip", "q3"]);
    assert.is(lead.client_id, null);
    assert.equal(lead.custom_fields, {});

    expectError(
      await app.request("POST", "/api/v1/crm/leads", {
        headers: acme,
        body: { name: "X", phone: "12-34" },
      }),
      400,
      "Phone number 12-34 does not look like a valid number (need 7-15 digits)",
    );
    const badEmail = await app.request("POST", "/api/v1/crm/leads", {
      headers: acme,
      body: { name: "X", email: "not an email" },
    });
    assert.is(badEmail.status, 400);
    assert.match(badEmail.body.error, "must be an e-mail address");
    const badStatus = await app.request("PUT", `/api/v1/crm/leads/${lead.id}`, {
      headers: acme,
      body: { status: "maybe" },
    });
    assert.is(badStatus.status, 400);
    const badName = await app.request("POST", "/api/v1/crm/leads", {
      headers: acme,
      body: { name: "X\n[evil]" },
    });
    assert.is(badName.status, 400);
    assert.match(badName.body.error, "must be on one line");

    const updated = await app.request("PUT", `/api/v1/crm/leads/${lead.id}`, {
      headers: acme,
      body: { status: "contacted", company: null, owner: "agent-7" },
    });
    assert.is(updated.status, 200, updated.text);
    assert.is(updated.body.status, "contacted");
    assert.is(updated.body.company, null);
    assert.is(updated.body.owner, "agent-7");
    assert.is(updated.body.name, "Asha Rao");
    const got = await app.request("GET", `/api/v1/crm/leads/${lead.id}`, { headers: acme });
    assert.equal(got.body, updated.body);

    // Tenant isolation: another org's lead is 403 without data, and its lists never show it.
    for (const [method, path] of [
      ["GET", `/crm/leads/${lead.id}`],
      ["PUT", `/crm/leads/${lead.id}`],
      ["DELETE", `/crm/leads/${lead.id}`],
      ["POST", `/crm/leads/${lead.id}/convert`],
      ["GET", `/crm/leads/${lead.id}/calls`],
    ] as const) {
      expectError(
        await app.request(method, `/api/v1${path}`, {
          headers: other,
          ...(method === "PUT" ? { body: { name: "Stolen" } } : {}),
        }),
        403,
        "Access denied",
      );
    }
    const otherList = await app.request("GET", "/api/v1/crm/leads", { headers: other });
    assert.equal(otherList.body.data, []);
    const lookup = await app.request("GET", "/api/v1/crm/lookup?phone=%2B918065978001", {
      headers: other,
    });
    assert.equal(lookup.body, { leads: [], clients: [] });

    // A lead's id on the clients path is not a client.
    expectError(
      await app.request("GET", `/api/v1/crm/clients/${lead.id}`, { headers: acme }),
      404,
      "Client not found",
    );
    expectError(
      await app.request("GET", "/api/v1/crm/leads/00000000-0000-4000-8000-000000000000", {
        headers: acme,
      }),
      404,
      "Lead not found",
    );

    const deleted = await app.request("DELETE", `/api/v1/crm/leads/${lead.id}`, { headers: acme });
    assert.is(deleted.status, 204);
    expectError(
      await app.request("GET", `/api/v1/crm/leads/${lead.id}`, { headers: acme }),
      404,
      "Lead not found",
    );
  } finally {
    await app.close();
  }
});

test("search, filters and pagination of leads; clients have no status", async () => {
  const { app, acme } = await setup();
  try {
    const people = [
      { name: "Asha Rao", phone: "+919900000001", company: "Rao Traders", tags: ["vip"] },
      { name: "Bilal Khan", phone: "+919900000002", email: "bilal@khan.in", owner: "a1" },
      { name: "Chen Wei", phone: "+14155550100", company: "Wei 100% Ltd", tags: ["vip", "us"] },
      { name: "Dana_Smith", owner: "a1", tags: ["us"] },
    ];
    const ids: string[] = [];
    for (const [index, person] of people.entries()) {
      app.clock.advance(1);
      const lead = await post(app, "/crm/leads", acme, person);
      ids.push(lead.id);
      if (index % 2 === 1) {
        await app.request("PUT", `/api/v1/crm/leads/${lead.id}`, {
          headers: acme,
          body: { status: "qualified" },
        });
      }
    }
    const names = async (query: string) => {
      const res = await app.request("GET", `/api/v1/crm/leads${query}`, { headers: acme });
      assert.is(res.status, 200, res.text);
      return res.body.data.map((l: { name: string }) => l.name);
    };
    assert.equal(await names(""), ["Asha Rao", "Bilal Khan", "Chen Wei", "Dana_Smith"]);
    assert.equal(await names("?q=rao"), ["Asha Rao"]);
    assert.equal(await names("?q=KHAN.IN"), ["Bilal Khan"]);
    assert.equal(await names("?q=9900000002"), ["Bilal Khan"]);
    assert.equal(await names("?q=100%25"), ["Chen Wei"], "% is literal");
    assert.equal(await names("?q=a_S"), ["Dana_Smith"], "_ is literal");
    assert.equal(await names("?status=qualified"), ["Bilal Khan", "Dana_Smith"]);
    assert.equal(await names("?owner=a1"), ["Bilal Khan", "Dana_Smith"]);
    assert.equal(await names("?tag=vip"), ["Asha Rao", "Chen Wei"]);
    assert.equal(await names("?tag=us&status=qualified"), ["Dana_Smith"]);
    const page = await app.request("GET", "/api/v1/crm/leads?limit=2&offset=1", { headers: acme });
    assert.equal(
      page.body.data.map((l: { id: string }) => l.id),
      ids.slice(1, 3),
    );
    assert.equal(page.body.pagination, { total: 4, limit: 2, offset: 1 });
    assert.is(page.headers.get("x-total-count"), "4");
    const filteredPage = await app.request("GET", "/api/v1/crm/leads?tag=vip&limit=1", {
      headers: acme,
    });
    assert.is(filteredPage.body.total, 2);
    assert.is(filteredPage.body.data.length, 1);

    const client = await post(app, "/crm/clients", acme, { name: "Eve", tags: ["vip"] });
    assert.not.ok("status" in client);
    assert.is(client.lead_id, null);
    assert.is(
      (await app.request("GET", "/api/v1/crm/clients?status=new", { headers: acme })).status,
      400,
    );
    const clients = await app.request("GET", "/api/v1/crm/clients?tag=vip", { headers: acme });
    assert.equal(
      clients.body.data.map((c: { name: string }) => c.name),
      ["Eve"],
    );
    const notForClients = await app.request("PUT", `/api/v1/crm/clients/${client.id}`, {
      headers: acme,
      body: { status: "won" },
    });
    assert.is(notForClients.status, 400);
  } finally {
    await app.close();
  }
});

test("custom fields: definitions, every type checked on write, required, removal", async () => {
  const { app, acme, other } = await setup();
  try {
    const field = (body: unknown) => {
      app.clock.advance(1);
      return app.request("POST", "/api/v1/crm/fields", { headers: acme, body });
    };
    const budget = (await field({ name: "budget", type: "number", required: true })).body;
    assert.equal(
      { name: budget.name, label: budget.label, required: budget.required },
      { name: "budget", label: "budget", required: true },
    );
    await field({ name: "vip", type: "boolean" });
    await field({ name: "met_on", type: "date", label: "Met on" });
    await field({ name: "source", type: "string" });
    const tier = (await field({ name: "tier", type: "enum", options: ["gold", "silver"] })).body;
    expectError(
      await field({ name: "budget", type: "string" }),
      409,
      "Custom field budget already exists",
    );
    expectError(
      await field({ name: "size", type: "enum" }),
      400,
      "options must list at least one value for an enum field",
    );
    expectError(
      await field({ name: "size", type: "number", options: ["1"] }),
      400,
      "options are only allowed for enum fields (type is number)",
    );
    const badName = await field({ name: "Bad Name", type: "string" });
    assert.is(badName.status, 400);
    assert.match(badName.body.error, "lowercase letters, digits or _");
    // Another org has its own definitions (and cannot see these).
    const otherFields = await app.request("GET", "/api/v1/crm/fields", { headers: other });
    assert.equal(otherFields.body.data, []);
    expectError(
      await app.request("GET", `/api/v1/crm/fields/${tier.id}`, { headers: other }),
      403,
      "Access denied",
    );

    expectError(
      await app.request("POST", "/api/v1/crm/leads", {
        headers: acme,
        body: { name: "No budget" },
      }),
      400,
      "custom_fields.budget is required",
    );
    expectError(
      await app.request("POST", "/api/v1/crm/leads", {
        headers: acme,
        body: {
          name: "Bad values",
          custom_fields: {
            budget: "lots",
            vip: "yes",
            met_on: "2026-02-30",
            tier: "bronze",
            source: "a\nb",
            colour: "red",
          },
        },
      }),
      400,
      [
        "custom_fields.budget must be a number",
        "custom_fields.vip must be true or false",
        "custom_fields.met_on must be a date (YYYY-MM-DD)",
        "custom_fields.tier must be one of: gold, silver",
        "custom_fields.source must be a one-line string of at most 1000 characters",
        "Unknown custom field: colour",
      ].join("; "),
    );
    const lead = await post(app, "/crm/leads", acme, {
      name: "Good",
      custom_fields: { budget: 5000, vip: true, met_on: "2026-02-28", tier: "gold", source: "web" },
    });
    assert.equal(lead.custom_fields, {
      budget: 5000,
      vip: true,
      met_on: "2026-02-28",
      tier: "gold",
      source: "web",
    });
    // Partial update merges; null removes; a required field cannot be removed.
    const merged = await app.request("PUT", `/api/v1/crm/leads/${lead.id}`, {
      headers: acme,
      body: { custom_fields: { vip: null, budget: 7500 } },
    });
    assert.equal(merged.body.custom_fields, {
      budget: 7500,
      met_on: "2026-02-28",
      tier: "gold",
      source: "web",
    });
    expectError(
      await app.request("PUT", `/api/v1/crm/leads/${lead.id}`, {
        headers: acme,
        body: { custom_fields: { budget: null } },
      }),
      400,
      "custom_fields.budget is required",
    );
    // Options change: the new value set applies to the next write.
    const changed = await app.request("PUT", `/api/v1/crm/fields/${tier.id}`, {
      headers: acme,
      body: { options: ["gold", "silver", "bronze"], label: "Tier" },
    });
    assert.is(changed.status, 200, changed.text);
    assert.equal(changed.body.options, ["gold", "silver", "bronze"]);
    const bronze = await app.request("PUT", `/api/v1/crm/leads/${lead.id}`, {
      headers: acme,
      body: { custom_fields: { tier: "bronze" } },
    });
    assert.is(bronze.body.custom_fields.tier, "bronze");
    // Deleting a field removes its values from every record.
    assert.is(
      (await app.request("DELETE", `/api/v1/crm/fields/${tier.id}`, { headers: acme })).status,
      204,
    );
    const after = await app.request("GET", `/api/v1/crm/leads/${lead.id}`, { headers: acme });
    assert.not.ok("tier" in after.body.custom_fields);
    const listed = await app.request("GET", "/api/v1/crm/fields", { headers: acme });
    assert.equal(
      listed.body.data.map((f: { name: string }) => f.name),
      ["budget", "vip", "met_on", "source"],
    );
  } finally {
    await app.close();
  }
});

function callRecord(orgId: string, n: number, src: string, dst: string): NewCallRecordRow {
  const at = `2026-01-0${n}T10:00:00.000Z`;
  return {
    org_id: orgId,
    uniqueid: `170000000${n}.1`,
    sequence: 1,
    linkedid: `170000000${n}.1`,
    calldate: at,
    answerdate: at,
    enddate: at,
    src,
    dst,
    dcontext: "org_incoming",
    clid: src,
    channel: `PJSIP/trunk-0000000${n}`,
    dstchannel: "",
    lastapp: "Dial",
    lastdata: "",
    duration: 10,
    billsec: 8,
    disposition: "ANSWERED",
    accountcode: orgId,
    peeraccount: "",
    direction: "inbound",
    recording_file: null,
    ingested_at: at,
  };
}

test("conversion links lead and client; a record's calls are the org's calls of its number", async () => {
  const { app, acme, other, acmeId, otherId } = await setup();
  try {
    const lead = await post(app, "/crm/leads", acme, {
      name: "Asha",
      phone: "+918065978001",
      tags: ["vip"],
      owner: "a1",
    });
    const converted = await app.request("POST", `/api/v1/crm/leads/${lead.id}/convert`, {
      headers: acme,
    });
    assert.is(converted.status, 200, converted.text);
    const { lead: won, client } = converted.body;
    assert.is(won.status, "won");
    assert.is(won.client_id, client.id);
    assert.is(client.lead_id, lead.id);
    assert.equal(
      [client.name, client.phone, client.tags, client.owner],
      ["Asha", "+918065978001", ["vip"], "a1"],
    );
    expectError(
      await app.request("POST", `/api/v1/crm/leads/${lead.id}/convert`, { headers: acme }),
      409,
      `Lead ${lead.id} was already converted to client ${client.id}`,
    );

    // Calls: the engine writes numbers in local, international or E.164 form.
    const records = [
      callRecord(acmeId, 1, "08065978001", "101"),
      callRecord(acmeId, 2, "101", "918065978001"),
      callRecord(acmeId, 3, "+919999999999", "101"),
      callRecord(otherId, 4, "+918065978001", "201"),
    ];
    for (const row of records) {
      assert.ok(await insertCallRecord(app.db, row));
      await foldIntoCall(app.db, row.org_id!, row);
    }
    for (const path of [`/crm/leads/${lead.id}/calls`, `/crm/clients/${client.id}/calls`]) {
      const calls = await app.request("GET", `/api/v1${path}`, { headers: acme });
      assert.is(calls.status, 200, calls.text);
      assert.equal(
        calls.body.calls.map((c: { linkedid: string }) => c.linkedid),
        ["1700000002.1", "1700000001.1"],
      );
      assert.is(calls.body.total, 2);
    }
    const noPhone = await post(app, "/crm/clients", acme, { name: "Silent" });
    const none = await app.request("GET", `/api/v1/crm/clients/${noPhone.id}/calls`, {
      headers: acme,
    });
    assert.equal(none.body.calls, []);

    const lookup = await app.request("GET", "/api/v1/crm/lookup?phone=08065978001", {
      headers: acme,
    });
    assert.equal(
      [
        lookup.body.leads.map((l: { id: string }) => l.id),
        lookup.body.clients.map((c: { id: string }) => c.id),
      ],
      [[lead.id], [client.id]],
    );
    const otherLookup = await app.request("GET", "/api/v1/crm/lookup?phone=08065978001", {
      headers: other,
    });
    assert.equal(otherLookup.body, { leads: [], clients: [] });
  } finally {
    await app.close();
  }
});

const ID = "00000000-0000-4000-8000-000000000001";

/** Every CRM operation with the permissions an `ak_` key needs for it. */
const MATRIX: ReadonlyArray<{
  method: string;
  path: string;
  body?: unknown;
  needs: ApiKeyPermission[];
}> = [
  { method: "GET", path: "/crm/leads", needs: ["crm.read"] },
  { method: "POST", path: "/crm/leads", body: { name: "L" }, needs: ["crm.write"] },
  {
    method: "POST",
    path: "/crm/leads",
    body: { name: "L", owner: "a" },
    needs: ["crm.write", "crm.assign"],
  },
  { method: "GET", path: `/crm/leads/${ID}`, needs: ["crm.read"] },
  { method: "PUT", path: `/crm/leads/${ID}`, body: { name: "L" }, needs: ["crm.write"] },
  {
    method: "PUT",
    path: `/crm/leads/${ID}`,
    body: { owner: "a" },
    needs: ["crm.write", "crm.assign"],
  },
  { method: "DELETE", path: `/crm/leads/${ID}`, needs: ["crm.delete"] },
  { method: "POST", path: `/crm/leads/${ID}/convert`, needs: ["crm.write"] },
  { method: "GET", path: `/crm/leads/${ID}/calls`, needs: ["calls.read", "crm.read"] },
  { method: "GET", path: "/crm/clients", needs: ["crm.read"] },
  { method: "POST", path: "/crm/clients", body: { name: "C" }, needs: ["crm.write"] },
  { method: "GET", path: `/crm/clients/${ID}`, needs: ["crm.read"] },
  { method: "PUT", path: `/crm/clients/${ID}`, body: { notes: "n" }, needs: ["crm.write"] },
  { method: "DELETE", path: `/crm/clients/${ID}`, needs: ["crm.delete"] },
  { method: "GET", path: `/crm/clients/${ID}/calls`, needs: ["calls.read", "crm.read"] },
  { method: "GET", path: "/crm/lookup?phone=%2B918065978001", needs: ["crm.read"] },
  { method: "GET", path: "/crm/fields", needs: ["crm.read"] },
  {
    method: "POST",
    path: "/crm/fields",
    body: { name: "f", type: "string" },
    needs: ["crm.customize"],
  },
  { method: "GET", path: `/crm/fields/${ID}`, needs: ["crm.read"] },
  { method: "PUT", path: `/crm/fields/${ID}`, body: { label: "F" }, needs: ["crm.customize"] },
  { method: "DELETE", path: `/crm/fields/${ID}`, needs: ["crm.customize"] },
];

test("crm.* permission matrix of ak_ keys: every operation x every permission", async () => {
  const { app, acme } = await setup();
  try {
    const keyWith = async (permissions: string[]) =>
      (await post(app, "/api-keys", acme, { name: permissions.join("+") || "none", permissions }))
        .api_key as string;
    const single = new Map<string, string>();
    for (const permission of API_KEY_PERMISSIONS)
      single.set(permission, await keyWith([permission]));
    let checked = 0;
    for (const op of MATRIX) {
      const call = (key: string) =>
        app.request(op.method, `/api/v1${op.path}`, {
          headers: { "x-api-key": key },
          ...(op.body !== undefined ? { body: op.body } : {}),
        });
      for (const permission of API_KEY_PERMISSIONS) {
        const res = await call(single.get(permission)!);
        const lacking = op.needs.find((p) => p !== permission);
        if (lacking) {
          // The route's own permission is checked first, then the field's (owner: crm.assign).
          const first = op.needs.includes(permission) ? lacking : op.needs[0]!;
          expectError(res, 403, `API key lacks permission: ${first}`);
        } else {
          assert.not.equal(
            res.status,
            403,
            `${op.method} ${op.path} with ${permission}: ${res.text}`,
          );
        }
        checked++;
      }
      // Exactly the needed permissions are enough.
      const enough = await call(await keyWith(op.needs));
      assert.ok(
        [200, 201, 204, 404, 409].includes(enough.status),
        `${op.method} ${op.path} with ${op.needs.join(",")}: ${enough.status} ${enough.text}`,
      );
    }
    assert.is(checked, MATRIX.length * API_KEY_PERMISSIONS.length);
  } finally {
    await app.close();
  }
});

test("crm.* events: written with the change, documented, delivered signed to a receiver", async () => {
  const { app, acme, acmeId } = await setup();
  const receiver = await startReceiver();
  app.pbx.deps.config.webhookAllowPrivate = true;
  const http = createNodeHttpClient({ allowPrivate: true });
  try {
    await post(app, "/webhooks", acme, {
      url: receiver.url,
      events: [
        "crm.lead.created",
        "crm.lead.updated",
        "crm.lead.status_changed",
        "crm.client.created",
        "crm.client.updated",
      ],
      secret: SECRET,
    });
    await post(app, "/crm/fields", acme, { name: "budget", type: "number" });
    const lead = await post(app, "/crm/leads", acme, { name: "Asha", phone: "+918065978001" });
    // A refused write stores no event.
    const refused = await app.request("PUT", `/api/v1/crm/leads/${lead.id}`, {
      headers: acme,
      body: { status: "qualified", custom_fields: { budget: "many" } },
    });
    assert.is(refused.status, 400);
    // A write that changes nothing sends nothing.
    await app.request("PUT", `/api/v1/crm/leads/${lead.id}`, {
      headers: acme,
      body: { name: "Asha" },
    });
    await app.request("PUT", `/api/v1/crm/leads/${lead.id}`, {
      headers: acme,
      body: { status: "qualified", custom_fields: { budget: 10 } },
    });
    const converted = await app.request("POST", `/api/v1/crm/leads/${lead.id}/convert`, {
      headers: acme,
    });
    const clientId = converted.body.client.id as string;
    await app.request("PUT", `/api/v1/crm/clients/${clientId}`, {
      headers: acme,
      body: { notes: "signed" },
    });

    const rows: OutboxRow[] = await outboxRows(app.db, acmeId);
    assert.equal(
      rows.map(([event]) => event),
      [
        "crm.lead.created",
        "crm.lead.updated",
        "crm.lead.status_changed",
        "crm.client.created",
        "crm.lead.updated",
        "crm.lead.status_changed",
        "crm.client.updated",
      ],
    );
    assertDocumented(rows);
    assert.equal(rows[1]![1].changes, ["status", "custom_fields"]);
    assert.equal([rows[2]![1].from, rows[2]![1].to], ["new", "qualified"]);
    assert.equal(rows[4]![1].changes, ["status", "client_id"]);
    assert.equal([rows[5]![1].from, rows[5]![1].to], ["qualified", "won"]);
    assert.is((rows[3]![1].client as { lead_id: string }).lead_id, lead.id);

    const dispatcher = createDispatcher({
      db: app.db,
      http,
      secrets: sealWithKey(app.pbx.deps.config.serverKey),
      clock: () => app.clock.now,
    });
    assert.is(await dispatcher.runDue(), 7);
    assert.is(receiver.requests.length, 7);
    for (const request of receiver.requests) {
      assert.is(
        request.headers["x-pbx-signature"],
        `sha256=${createHmac("sha256", SECRET).update(request.body).digest("hex")}`,
      );
      const body = JSON.parse(request.body);
      assert.is(body.organization_id, acmeId);
      assert.is(request.headers["x-pbx-event"], body.event);
    }
    const created = receiver.requests
      .map((r) => JSON.parse(r.body))
      .find((b) => b.event === "crm.lead.created");
    assert.is(created.data.lead.id, lead.id);
    assert.is(created.data.lead.phone, "+918065978001");
  } finally {
    http.close();
    await receiver.close();
    await app.close();
  }
});

test.run();
