// `/tickets` and `/orgs/{orgId}/ticket-alerts`: pages and filters, another org's ticket is 403
// `Access denied`, changes kept in the history, `tickets.*` permissions of `ak_` keys, alerts
// and the messages they queue with a ticket.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { purgeOrg, setRetention } from "../../src/domain/compliance/retention.js";
import { openTicketForCall } from "../../src/domain/tickets/tickets.js";
import { createTicketRepository } from "../../src/store/ticket-repository.js";
import { expectError, rowsOf, startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let acme: { id: string; headers: Record<string, string> };
let bravo: { id: string; headers: Record<string, string> };

test.before(async () => {
  app = await startTestApp();
  const a = await app.createOrg("Acme");
  const b = await app.createOrg("Bravo");
  acme = { id: a.id, headers: { "x-api-key": a.api_key } };
  bravo = { id: b.id, headers: { "x-api-key": b.api_key } };
});
test.after(async () => app.close());

async function open(
  orgId: string,
  phone: string,
  source: "missed_call" | "queue_timeout" | "bot_dropped",
  linkedid: string,
) {
  const opened = await openTicketForCall(
    { db: app.db, clock: () => app.clock.now },
    { orgId, source, phone, channelId: `PJSIP/x-${linkedid}`, linkedid },
  );
  app.clock.advance(60);
  return opened.ticket;
}

async function apiKey(permissions: string[]): Promise<Record<string, string>> {
  const res = await app.request("POST", "/api/v1/api-keys", {
    headers: acme.headers,
    body: { name: `k-${permissions.join("-") || "none"}`, permissions },
  });
  assert.is(res.status, 201, res.text);
  return { "x-api-key": res.body.api_key };
}

test("GET /tickets: newest first, paged, filtered by status, source, priority, phone and dates", async () => {
  const first = await open(acme.id, "919800000001", "missed_call", "t1");
  await open(acme.id, "919800000002", "queue_timeout", "t2");
  await open(acme.id, "919800000003", "bot_dropped", "t3");
  await open(acme.id, "919800000001", "queue_timeout", "t4"); // repeat caller: urgent
  await open(bravo.id, "919800000009", "missed_call", "t9");
  const all = await app.request("GET", "/api/v1/tickets", { headers: acme.headers });
  assert.is(all.status, 200, all.text);
  assert.is(all.body.total, 3);
  assert.equal(
    rowsOf(all).map((t) => t.linkedid),
    ["t3", "t2", "t1"],
  );
  const page = await app.request("GET", "/api/v1/tickets?limit=1&offset=1", {
    headers: acme.headers,
  });
  assert.equal(
    rowsOf(page).map((t) => t.linkedid),
    ["t2"],
  );
  assert.is(page.headers.get("x-total-count"), "3");
  const q = async (query: string) =>
    rowsOf(await app.request("GET", `/api/v1/tickets?${query}`, { headers: acme.headers })).map(
      (t) => t.linkedid,
    );
  assert.equal(await q("source=bot_dropped"), ["t3"]);
  assert.equal(await q("priority=urgent"), ["t1"]);
  assert.equal(await q("status=open"), ["t3", "t2", "t1"]);
  assert.equal(await q("phone=0002"), ["t2"]);
  assert.equal(
    await q(
      `from=${encodeURIComponent(first.created_at)}&to=${encodeURIComponent(new Date(Date.parse(first.created_at) + 61_000).toISOString())}`,
    ),
    ["t2", "t1"],
  );
  expectError(
    await app.request("GET", "/api/v1/tickets?status=pending", { headers: acme.headers }),
    400,
    "status must be one of: open, in_progress, closed",
  );
  const t = rowsOf(all)[2];
  assert.equal(
    [t.ticket_id, t.org_id, t.source, t.priority, t.phone, t.channel_id, t.timestamp],
    [t.id, acme.id, "missed_call", "urgent", "919800000001", "PJSIP/x-t1", first.created_at],
  );
});

test("GET /tickets/{id}: the org's own ticket; another org's is 403 Access denied; none is 404", async () => {
  const ticket = await open(acme.id, "919800000101", "missed_call", "g1");
  const own = await app.request("GET", `/api/v1/tickets/${ticket.id}`, { headers: acme.headers });
  assert.is(own.status, 200);
  assert.equal(
    own.body.history.map((h: { action: string }) => h.action),
    ["created"],
  );
  expectError(
    await app.request("GET", `/api/v1/tickets/${ticket.id}`, { headers: bravo.headers }),
    403,
    "Access denied",
  );
  expectError(
    await app.request("PATCH", `/api/v1/tickets/${ticket.id}`, {
      headers: bravo.headers,
      body: { status: "closed" },
    }),
    403,
    "Access denied",
  );
  expectError(
    await app.request("GET", "/api/v1/tickets/00000000-0000-4000-8000-000000000000", {
      headers: acme.headers,
    }),
    404,
    "Ticket not found",
  );
  assert.is((await app.request("GET", "/api/v1/tickets")).status, 401);
});

test("PATCH /tickets/{id}: status, priority, assignee and note, each change in the history", async () => {
  const ticket = await open(acme.id, "919800000201", "queue_timeout", "p1");
  const res = await app.request("PATCH", `/api/v1/tickets/${ticket.id}`, {
    headers: acme.headers,
    body: { status: "in_progress", assignee: "alice@example.com", note: "called back" },
  });
  assert.is(res.status, 200, res.text);
  assert.equal(
    [res.body.status, res.body.assignee, res.body.note, res.body.priority],
    ["in_progress", "alice@example.com", "called back", "high"],
  );
  const last = res.body.history.at(-1);
  assert.is(last.action, "updated");
  assert.is(last.actor, "org_key");
  assert.equal(last.changes, {
    status: { from: "open", to: "in_progress" },
    assignee: { from: null, to: "alice@example.com" },
    note: { from: null, to: "called back" },
  });
  const closed = await app.request("PATCH", `/api/v1/tickets/${ticket.id}`, {
    headers: acme.headers,
    body: { status: "closed", priority: "urgent" },
  });
  assert.is(closed.body.history.length, 3);
  expectError(
    await app.request("PATCH", `/api/v1/tickets/${ticket.id}`, {
      headers: acme.headers,
      body: { status: "done" },
    }),
    400,
    "status must be one of: open, in_progress, closed",
  );
});

test("ak_ keys: tickets.read to read, tickets.write to change", async () => {
  const ticket = await open(acme.id, "919800000301", "missed_call", "k1");
  const none = await apiKey(["calls.read"]);
  const reader = await apiKey(["tickets.read"]);
  const writer = await apiKey(["tickets.read", "tickets.write"]);
  expectError(
    await app.request("GET", "/api/v1/tickets", { headers: none }),
    403,
    "API key lacks permission: tickets.read",
  );
  assert.is(
    (await app.request("GET", `/api/v1/tickets/${ticket.id}`, { headers: reader })).status,
    200,
  );
  expectError(
    await app.request("PATCH", `/api/v1/tickets/${ticket.id}`, {
      headers: reader,
      body: { note: "x" },
    }),
    403,
    "API key lacks permission: tickets.write",
  );
  const done = await app.request("PATCH", `/api/v1/tickets/${ticket.id}`, {
    headers: writer,
    body: { note: "x" },
  });
  assert.is(done.status, 200);
  assert.match(done.body.history.at(-1).actor, /^api_key:/);
});

test("ticket alerts: CRUD in the org's own path only; matching alerts queue a message with the ticket", async () => {
  const base = `/api/v1/orgs/${acme.id}/ticket-alerts`;
  const created = await app.request("POST", base, {
    headers: acme.headers,
    body: {
      name: "Supervisor",
      channel: "whatsapp",
      recipient: "+91 98450 00000",
      sources: ["missed_call", "bot_dropped"],
      priorities: ["urgent"],
    },
  });
  assert.is(created.status, 201, created.text);
  assert.equal(
    [created.body.recipient, created.body.active, created.body.sources],
    ["+919845000000", true, ["missed_call", "bot_dropped"]],
  );
  const id = created.body.id;
  expectError(
    await app.request("GET", `/api/v1/orgs/${acme.id}/ticket-alerts`, { headers: bravo.headers }),
    403,
    "Access denied",
  );
  expectError(
    await app.request("GET", `/api/v1/orgs/${bravo.id}/ticket-alerts/${id}`, {
      headers: bravo.headers,
    }),
    403,
    "Access denied",
  );
  expectError(
    await app.request("POST", base, {
      headers: acme.headers,
      body: {
        name: "x",
        channel: "whatsapp",
        recipient: "12",
        sources: ["missed_call"],
        priorities: ["high"],
      },
    }),
    400,
    "Phone number 12 does not look like a valid number (need 7-15 digits)",
  );
  expectError(
    await app.request("POST", base, {
      headers: acme.headers,
      body: {
        name: "x",
        channel: "webhook",
        recipient: "http://127.0.0.1/x",
        sources: ["missed_call"],
        priorities: ["high"],
      },
    }),
    400,
    "url must not point to a loopback, link-local or private address (the server allows them with PBX_WEBHOOK_ALLOW_PRIVATE=1)",
  );
  const listed = await app.request("GET", base, { headers: acme.headers });
  assert.equal(
    rowsOf(listed).map((a) => a.id),
    [id],
  );

  // A new high ticket does not match (urgent only); the repeat call that makes it urgent does.
  const ticket = await open(acme.id, "919800000401", "missed_call", "a1");
  const messagesOf = () =>
    app.db.selectFrom("ticket_messages").selectAll().where("ticket_id", "=", ticket.id).execute();
  assert.equal(await messagesOf(), []);
  await open(acme.id, "919800000401", "missed_call", "a2");
  const queued = await messagesOf();
  assert.is(queued.length, 1);
  assert.ok(queued[0]!.body.includes('"to":"919845000000"'), queued[0]!.body);
  assert.ok(queued[0]!.body.includes('"name":"ticket_alert"'));

  const changed = await app.request("PUT", `${base}/${id}`, {
    headers: acme.headers,
    body: { active: false, priorities: ["high", "urgent"] },
  });
  assert.equal([changed.body.active, changed.body.priorities], [false, ["high", "urgent"]]);
  assert.is((await app.request("DELETE", `${base}/${id}`, { headers: acme.headers })).status, 204);
  expectError(
    await app.request("GET", `${base}/${id}`, { headers: acme.headers }),
    404,
    "Ticket alert not found",
  );
});

test("deleteOlderThan removes an org's tickets before the cutoff with their history, and only those", async () => {
  const repo = createTicketRepository(app.db);
  const before = (await repo.list(bravo.id, {}, { limit: 100, offset: 0 })).total;
  const cutoff = app.clock.now.toISOString();
  const young = await open(bravo.id, "919800000501", "missed_call", "r1");
  const gone = await repo.deleteOlderThan(bravo.id, cutoff);
  assert.is(gone, before);
  const left = await repo.list(bravo.id, {}, { limit: 100, offset: 0 });
  assert.equal(
    left.rows.map((t) => t.id),
    [young.id],
  );
  assert.ok((await repo.list(acme.id, {}, { limit: 1, offset: 0 })).total > 0, "acme untouched");
});

test("the retention purge deletes an org's tickets older than its tickets policy, and only those", async () => {
  const repo = createTicketRepository(app.db);
  const cutoffNow = app.clock.now;
  const bravoBefore = (await repo.list(bravo.id, {}, { limit: 100, offset: 0 })).total;
  const acmeTotal = (await repo.list(acme.id, {}, { limit: 100, offset: 0 })).total;
  assert.ok(acmeTotal > 0 && bravoBefore > 0);
  await setRetention(app.db, acme.id, { tickets: 1 }, cutoffNow);
  const later = new Date(cutoffNow.getTime() + 2 * 24 * 60 * 60 * 1000);
  const context = { db: app.db, recordingsDir: "/nonexistent" };
  const dry = await purgeOrg(context, acme.id, later, true);
  assert.equal(dry.kinds.tickets, {
    days: 1,
    cutoff: new Date(later.getTime() - 24 * 60 * 60 * 1000).toISOString(),
    deleted: acmeTotal,
    supported: true,
  });
  assert.is((await repo.list(acme.id, {}, { limit: 1, offset: 0 })).total, acmeTotal, "dry run");
  const run = await purgeOrg(context, acme.id, later, false);
  assert.is(run.kinds.tickets.deleted, acmeTotal);
  assert.is((await repo.list(acme.id, {}, { limit: 1, offset: 0 })).total, 0);
  assert.is(
    (await repo.list(bravo.id, {}, { limit: 1, offset: 0 })).total,
    bravoBefore,
    "Bravo untouched",
  );
});

test.run();
