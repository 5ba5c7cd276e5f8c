// The ticket-opened message and the workflow trigger, checked byte for byte at a loopback
// receiver: the WhatsApp Business Cloud API request shape (`POST {base}/{phone_number_id}/messages`,
// bearer token, template message), the workflow body `{phone, source, ticket_id, timestamp,
// org_id}`, retries through the outbox, and the provider key that is never readable back.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openTicketForCall } from "../../src/domain/tickets/tickets.js";
import { createMessageDispatcher } from "../../src/tickets/messaging.js";
import { bearer, expectError, INTERNAL_KEY, startTestApp, type TestApp } from "../api/helpers.js";
import { FakeTime, startReceiver } from "./helpers.js";

const internal = { "x-internal-key": INTERNAL_KEY };
const TOKEN = "EAAG-secret-token-123";

async function configure(app: TestApp, orgId: string, base: string, workflow: string | null) {
  const provider = await app.request("PUT", "/api/v1/tickets/internal/provider", {
    headers: internal,
    body: { base_url: `${base}/v21.0`, phone_number_id: "106540352242922", access_token: TOKEN },
  });
  assert.is(provider.status, 200, provider.text);
  assert.not.ok(provider.text.includes(TOKEN), "the token is never answered");
  const config = await app.request("PUT", `/api/v1/tickets/internal/messaging-config/${orgId}`, {
    headers: internal,
    body: {
      enabled: true,
      template_name: "ticket_opened",
      language: "en_US",
      workflow_url: workflow,
    },
  });
  assert.is(config.status, 200, config.text);
}

test("a new ticket sends the provider's template message and triggers the workflow, byte for byte", async () => {
  const app = await startTestApp();
  const receiver = await startReceiver();
  const time = new FakeTime();
  try {
    const org = await app.createOrg();
    await configure(app, org.id, receiver.url, `${receiver.url}/hooks/ticket-open?x=1`);
    const opened = await openTicketForCall(
      { db: app.db, clock: time.clock },
      {
        orgId: org.id,
        source: "missed_call",
        phone: "+91 98123 45678",
        channelId: "PJSIP/org_x_trunk-00000001",
        linkedid: "1700000000.1",
      },
    );
    assert.is(opened.outcome, "created");
    const id = opened.ticket.id;
    const dispatcher = createMessageDispatcher({
      db: app.db,
      clock: time.clock,
      serverKey: app.pbx.deps.config.serverKey,
      timers: time,
    });
    assert.is(await dispatcher.runDue(), 2);
    const [message, workflow] = [
      receiver.requests.find((r) => r.url.endsWith("/messages")),
      receiver.requests.find((r) => r.url.startsWith("/hooks/")),
    ];
    assert.ok(message && workflow, JSON.stringify(receiver.requests));
    assert.is(message.method, "POST");
    assert.is(message.url, "/v21.0/106540352242922/messages");
    assert.is(message.headers.authorization, `Bearer ${TOKEN}`);
    assert.is(message.headers["content-type"], "application/json");
    assert.is(
      message.body,
      `{"messaging_product":"whatsapp","recipient_type":"individual","to":"919812345678","type":"template","template":{"name":"ticket_opened","language":{"code":"en_US"},"components":[{"type":"body","parameters":[{"type":"text","text":"${id}"}]}]}}`,
    );
    assert.is(workflow.method, "POST");
    assert.is(workflow.url, "/hooks/ticket-open?x=1");
    assert.is(workflow.headers["content-type"], "application/json");
    assert.is(
      workflow.headers.authorization,
      undefined,
      "the provider token stays with the provider",
    );
    assert.is(
      workflow.body,
      `{"phone":"+91 98123 45678","source":"missed_call","ticket_id":"${id}","timestamp":"2026-03-01T10:00:00.000Z","org_id":"${org.id}"}`,
    );
    assert.is(await dispatcher.runDue(), 0, "sent once");
  } finally {
    await receiver.close();
    await app.close();
  }
});

test("a failed send is retried from the outbox after 1 s; no config, no message; repeat caller sends none", async () => {
  const app = await startTestApp();
  let answers = [500];
  const receiver = await startReceiver(() => answers.shift() ?? 200);
  const time = new FakeTime();
  try {
    const org = await app.createOrg();
    const quiet = await app.createOrg("Quiet");
    await configure(app, org.id, receiver.url, null);
    const deps = { db: app.db, clock: time.clock };
    const call = {
      orgId: org.id,
      source: "queue_timeout" as const,
      phone: "919812345678",
      channelId: "PJSIP/a-1",
      linkedid: "l1",
    };
    await openTicketForCall(deps, call);
    await openTicketForCall(deps, { ...call, linkedid: "l2" });
    await openTicketForCall(deps, { ...call, orgId: quiet.id, linkedid: "l3" });
    const dispatcher = createMessageDispatcher({
      db: app.db,
      clock: time.clock,
      serverKey: app.pbx.deps.config.serverKey,
      timers: time,
    });
    assert.is(
      await dispatcher.runDue(),
      1,
      "one message: the repeat call and the quiet org send none",
    );
    assert.is(receiver.requests.length, 1);
    const row = await app.db.selectFrom("ticket_messages").selectAll().executeTakeFirstOrThrow();
    assert.is(row.status, "pending");
    assert.is(row.attempts, 1);
    assert.is(row.last_status, 500);
    assert.is(await dispatcher.runDue(), 0, "not due before 1 s");
    time.advance(1000);
    assert.is(await dispatcher.runDue(), 1);
    assert.is(receiver.requests.length, 2);
    assert.is(receiver.requests[1]!.body, receiver.requests[0]!.body, "the same bytes again");
    const sent = await app.db.selectFrom("ticket_messages").selectAll().executeTakeFirstOrThrow();
    assert.is(sent.status, "sent");
    answers = [];
  } finally {
    await receiver.close();
    await app.close();
  }
});

test("internal settings endpoints need X-Internal-Key; the provider key is never readable back", async () => {
  const app = await startTestApp();
  try {
    const org = await app.createOrg();
    const orgKey = { "x-api-key": org.api_key };
    expectError(
      await app.request("PUT", "/api/v1/tickets/internal/provider", {
        body: { access_token: TOKEN },
      }),
      401,
      "Authentication required",
    );
    const denied = await app.request("PUT", "/api/v1/tickets/internal/provider", {
      headers: orgKey,
      body: { access_token: TOKEN },
    });
    assert.is(denied.status, 403);
    assert.is(
      (
        await app.request("GET", `/api/v1/tickets/internal/messaging-config/${org.id}`, {
          headers: orgKey,
        })
      ).status,
      403,
    );
    await app.request("PUT", "/api/v1/tickets/internal/provider", {
      headers: internal,
      body: { access_token: TOKEN, phone_number_id: "42" },
    });
    const read = await app.request("GET", "/api/v1/tickets/internal/provider", {
      headers: internal,
    });
    assert.equal(read.body, {
      base_url: "https://graph.facebook.com/v21.0",
      phone_number_id: "42",
      access_token_set: true,
      updated_at: read.body.updated_at,
    });
    const admin = await app.request("GET", "/api/v1/admin/whatsapp/settings", {
      headers: bearer(await app.adminToken()),
    });
    assert.is(admin.status, 200);
    assert.not.ok(admin.text.includes(TOKEN));
    const stored = await app.db
      .selectFrom("messaging_provider")
      .selectAll()
      .executeTakeFirstOrThrow();
    assert.not.ok(stored.access_token?.includes(TOKEN), "sealed at rest");
    const config = await app.request("GET", `/api/v1/tickets/internal/messaging-config/${org.id}`, {
      headers: internal,
    });
    assert.equal(
      [config.body.enabled, config.body.template_name, config.body.workflow_url],
      [false, "ticket_opened", null],
    );
    expectError(
      await app.request("PUT", `/api/v1/tickets/internal/messaging-config/${org.id}`, {
        headers: internal,
        body: { workflow_url: "ftp://x" },
      }),
      400,
      "workflow_url must be an absolute http or https URL",
    );
  } finally {
    await app.close();
  }
});

test("WhatsApp admin: templates CRUD and a test send through the provider (admin JWT only)", async () => {
  const app = await startTestApp();
  const receiver = await startReceiver(() => 200);
  try {
    const admin = bearer(await app.adminToken());
    const org = await app.createOrg();
    assert.is(
      (
        await app.request("GET", "/api/v1/admin/whatsapp/templates", {
          headers: { "x-api-key": org.api_key },
        })
      ).status,
      403,
    );
    const created = await app.request("POST", "/api/v1/admin/whatsapp/templates", {
      headers: admin,
      body: {
        name: "ticket_opened",
        language: "en_US",
        category: "utility",
        body_text: "Ticket {{1}} opened",
      },
    });
    assert.is(created.status, 201, created.text);
    expectError(
      await app.request("POST", "/api/v1/admin/whatsapp/templates", {
        headers: admin,
        body: { name: "ticket_opened", language: "en_US", category: "utility", body_text: "x" },
      }),
      409,
      "Template 'ticket_opened' (en_US) already exists",
    );
    const id = created.body.id;
    const changed = await app.request("PUT", `/api/v1/admin/whatsapp/templates/${id}`, {
      headers: admin,
      body: { body_text: "Your ticket {{1}} is open" },
    });
    assert.is(changed.body.body_text, "Your ticket {{1}} is open");
    const list = await app.request("GET", "/api/v1/admin/whatsapp/templates", { headers: admin });
    assert.is(list.body.total, 1);
    expectError(
      await app.request("POST", "/api/v1/admin/whatsapp/test-send", {
        headers: admin,
        body: { to: "919812345678", template_name: "ticket_opened", language: "en_US" },
      }),
      400,
      "Messaging provider is not configured",
    );
    await app.request("PUT", "/api/v1/admin/whatsapp/settings", {
      headers: admin,
      body: { base_url: receiver.url, phone_number_id: "77", access_token: TOKEN },
    });
    const sent = await app.request("POST", "/api/v1/admin/whatsapp/test-send", {
      headers: admin,
      body: {
        to: "919812345678",
        template_name: "ticket_opened",
        language: "en_US",
        parameters: ["T-1"],
      },
    });
    assert.equal(sent.body, { success: true, status_code: 200, error: null });
    assert.is(receiver.requests[0]!.url, "/77/messages");
    assert.is(receiver.requests[0]!.headers.authorization, `Bearer ${TOKEN}`);
    assert.is(
      receiver.requests[0]!.body,
      '{"messaging_product":"whatsapp","recipient_type":"individual","to":"919812345678","type":"template","template":{"name":"ticket_opened","language":{"code":"en_US"},"components":[{"type":"body","parameters":[{"type":"text","text":"T-1"}]}]}}',
    );
    assert.is(
      (await app.request("DELETE", `/api/v1/admin/whatsapp/templates/${id}`, { headers: admin }))
        .status,
      204,
    );
    expectError(
      await app.request("GET", `/api/v1/admin/whatsapp/templates/${id}`, { headers: admin }),
      404,
      "Template not found",
    );
  } finally {
    await receiver.close();
    await app.close();
  }
});

test.run();
