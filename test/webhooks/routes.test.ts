// The /webhooks routes on the real app (loopback port, fresh SQLite file), with a real receiver.
import { createHmac } from "node:crypto";
import SwaggerParser from "@apidevtools/swagger-parser";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildOpenApiDocument } from "../../src/api/openapi.js";
import { allRoutes } from "../../src/api/routes/index.js";
import { sealWithKey } from "../../src/domain/webhooks/webhook-service.js";
import { createDispatcher } from "../../src/webhooks/dispatcher.js";
import { WEBHOOK_EVENTS } from "../../src/webhooks/events.js";
import { createNodeHttpClient } from "../../src/webhooks/http-client.js";
import { PRIVATE_TARGET_MESSAGE } from "../../src/webhooks/url-guard.js";
import { expectError, startTestApp } from "../api/helpers.js";
import { startReceiver } from "./helpers.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

async function setup() {
  const app = await startTestApp();
  const receiver = await startReceiver();
  const acme = await app.createOrg("Acme");
  const other = await app.createOrg("Other");
  const as = (key: string) => ({ "x-api-key": key });
  return { app, receiver, acme: as(acme.api_key), other: as(other.api_key), acmeId: acme.id };
}

test("CRUD, masking, org scope, SSRF guard and validation messages", async () => {
  const t = await setup();
  try {
    expectError(
      await t.app.request("POST", "/api/v1/webhooks", {
        headers: t.acme,
        body: { url: t.receiver.url, events: ["call.ended"] },
      }),
      400,
      PRIVATE_TARGET_MESSAGE,
    );
    // Every problem of the request at once; a host name needs no DNS to be saved.
    expectError(
      await t.app.request("POST", "/api/v1/webhooks", {
        headers: t.acme,
        body: {
          url: "https://hooks.example.invalid/pbx",
          events: ["call.ended", "call.exploded", "ivr.dtmf"],
        },
      }),
      400,
      `Unknown event type: call.exploded (allowed: ${WEBHOOK_EVENTS.join(", ")}); ` +
        "ivr.* events are not implemented",
    );
    expectError(
      await t.app.request("POST", "/api/v1/webhooks", {
        headers: t.acme,
        body: { url: "http://127.0.0.1/x", events: ["ivr.dtmf"] },
      }),
      400,
      `${PRIVATE_TARGET_MESSAGE}; ivr.* events are not implemented`,
    );
    const offline = await t.app.request("POST", "/api/v1/webhooks", {
      headers: t.acme,
      body: { url: "https://hooks.example.invalid/pbx", events: ["call.ended"] },
    });
    assert.is(offline.status, 201, offline.text);
    await t.app.request("DELETE", `/api/v1/webhooks/${offline.body.id}`, { headers: t.acme });
    t.app.pbx.deps.config.webhookAllowPrivate = true;
    expectError(
      await t.app.request("POST", "/api/v1/webhooks", {
        headers: t.acme,
        body: { url: t.receiver.url, events: ["ivr.dtmf"] },
      }),
      400,
      "ivr.* events are not implemented",
    );
    expectError(
      await t.app.request("POST", "/api/v1/webhooks", { headers: t.acme, body: { events: [] } }),
      400,
      "url is required",
    );
    expectError(await t.app.request("GET", "/api/v1/webhooks"), 401, "Authentication required");

    const created = await t.app.request("POST", "/api/v1/webhooks", {
      headers: t.acme,
      body: { url: t.receiver.url, events: ["call.ended"], secret: SECRET },
    });
    assert.is(created.status, 201, created.text);
    assert.is(created.body.secret, SECRET);
    assert.is(created.body.retry_count, 5);
    assert.is(created.body.timeout, 5000);
    const id = created.body.id as string;
    // The secret is sealed at rest, not stored as sent.
    const row = await t.app.db
      .selectFrom("webhooks" as never)
      .selectAll()
      .executeTakeFirst();
    assert.is.not((row as { secret: string }).secret, SECRET);
    assert.is(
      sealWithKey(t.app.pbx.deps.config.serverKey).open((row as { secret: string }).secret),
      SECRET,
    );

    const got = await t.app.request("GET", `/api/v1/webhooks/${id}`, { headers: t.acme });
    assert.is(got.body.secret, "whsec_…LaSw");
    const list = await t.app.request("GET", "/api/v1/webhooks", { headers: t.acme });
    assert.equal(
      list.body.data.map((w: { id: string }) => w.id),
      [id],
    );
    assert.equal(
      (await t.app.request("GET", "/api/v1/webhooks", { headers: t.other })).body.data,
      [],
    );
    expectError(
      await t.app.request("GET", `/api/v1/webhooks/${id}`, { headers: t.other }),
      404,
      "Webhook not found",
    );
    expectError(
      await t.app.request("PUT", `/api/v1/webhooks/${id}`, { headers: t.other, body: {} }),
      404,
      "Webhook not found",
    );
    expectError(
      await t.app.request("DELETE", `/api/v1/webhooks/${id}`, { headers: t.other }),
      404,
      "Webhook not found",
    );
    const put = await t.app.request("PUT", `/api/v1/webhooks/${id}`, {
      headers: t.acme,
      body: { retry_count: 2, events: ["call.ended", "call.initiated"] },
    });
    assert.is(put.status, 200, put.text);
    assert.is(put.body.retry_count, 2);
    assert.equal(put.body.events, ["call.ended", "call.initiated"]);
    assert.is(put.body.secret, "whsec_…LaSw");
    const tooMany = await t.app.request("PUT", `/api/v1/webhooks/${id}`, {
      headers: t.acme,
      body: { retry_count: 11 },
    });
    assert.is(tooMany.status, 400);
    assert.is(
      (await t.app.request("DELETE", `/api/v1/webhooks/${id}`, { headers: t.acme })).status,
      204,
    );
    expectError(
      await t.app.request("GET", `/api/v1/webhooks/${id}`, { headers: t.acme }),
      404,
      "Webhook not found",
    );
  } finally {
    await t.receiver.close();
    await t.app.close();
  }
});

test("test delivery, deliveries list, replay and the simulated call through the outbox", async () => {
  const t = await setup();
  t.app.pbx.deps.config.webhookAllowPrivate = true;
  const http = createNodeHttpClient({ allowPrivate: true });
  try {
    const created = await t.app.request("POST", "/api/v1/webhooks", {
      headers: t.acme,
      body: {
        url: t.receiver.url,
        events: ["call.initiated", "call.ringing", "call.answered", "call.ended"],
        secret: SECRET,
      },
    });
    const id = created.body.id as string;
    const tested = await t.app.request("POST", `/api/v1/webhooks/${id}/test`, { headers: t.acme });
    assert.is(tested.status, 200, tested.text);
    assert.is(tested.body.success, true);
    assert.is(tested.body.status_code, 200);
    assert.type(tested.body.latency_ms, "number");
    const sent = t.receiver.requests[0]!;
    assert.is(
      sent.headers["x-pbx-signature"],
      `sha256=${createHmac("sha256", SECRET).update(sent.body).digest("hex")}`,
    );
    assert.is(JSON.parse(sent.body).organization_id, t.acmeId);

    const simulated = await t.app.request("POST", "/api/v1/test/call-event", {
      headers: t.acme,
      body: { call_id: "route-call" },
    });
    assert.is(simulated.status, 202, simulated.text);
    assert.is(simulated.body.events.length, 4);
    // What the server's dispatcher does (the lead wires it into server.ts): deliver the outbox.
    const dispatcher = createDispatcher({
      db: t.app.db,
      http,
      secrets: sealWithKey(t.app.pbx.deps.config.serverKey),
      clock: () => t.app.clock.now,
    });
    assert.is(await dispatcher.runDue(), 4);
    assert.equal(
      t.receiver.requests
        .slice(1)
        .map((r) => JSON.parse(r.body).event)
        .sort(),
      ["call.answered", "call.ended", "call.initiated", "call.ringing"],
    );

    const deliveries = await t.app.request("GET", `/api/v1/webhooks/${id}/deliveries?limit=10`, {
      headers: t.acme,
    });
    assert.is(deliveries.status, 200, deliveries.text);
    assert.is(deliveries.body.data.length, 5);
    assert.equal(deliveries.body.pagination, { total: 5, limit: 10, offset: 0 });
    assert.ok(deliveries.body.data.every((d: { status: string }) => d.status === "delivered"));
    const first = deliveries.body.data.find((d: { event: string }) => d.event === "webhook.test");
    expectError(
      await t.app.request("GET", `/api/v1/webhooks/${id}/deliveries`, { headers: t.other }),
      404,
      "Webhook not found",
    );
    const replay = await t.app.request(
      "POST",
      `/api/v1/webhooks/${id}/deliveries/${first.id}/replay`,
      { headers: t.acme },
    );
    assert.is(replay.status, 202, replay.text);
    assert.is(replay.body.replay_of, first.id);
    assert.is(await dispatcher.runDue(), 1);
    assert.is(t.receiver.requests.length, 6);
  } finally {
    http.close();
    await t.receiver.close();
    await t.app.close();
  }
});

test("the webhook routes yield a valid OpenAPI 3.0.3 document under the Webhooks tag", async () => {
  const doc = buildOpenApiDocument(allRoutes, {
    baseUrl: "https://pbx.example.test",
    version: "0.0.0",
  }) as { paths: Record<string, Record<string, { tags: string[] }>> };
  await SwaggerParser.validate(structuredClone(doc) as never);
  const ours = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith("/webhooks") || path === "/test/call-event")
    .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));
  assert.equal(ours.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort(), [
    "DELETE /webhooks/{id}",
    "GET /webhooks",
    "GET /webhooks/{id}",
    "GET /webhooks/{id}/deliveries",
    "POST /test/call-event",
    "POST /webhooks",
    "POST /webhooks/{id}/deliveries/{deliveryId}/replay",
    "POST /webhooks/{id}/test",
    "PUT /webhooks/{id}",
  ]);
  assert.ok(ours.every((o) => o.op.tags.includes("Webhooks")));
});

test.run();
