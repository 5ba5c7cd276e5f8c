// The outbox: rows written in the caller's transaction, one per matching active webhook of the
// org; the dispatcher loop picks them up on its own; use cases test, replay and simulate a call.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DomainError } from "../../src/domain/errors.js";
import { emitEvent, simulateCallEvent } from "../../src/domain/webhooks/webhook-events.js";
import {
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  replayDelivery,
  testWebhook,
  updateWebhook,
} from "../../src/domain/webhooks/webhooks.js";
import { createDeliveryRepository } from "../../src/store/webhook-delivery-repository.js";
import { createDispatcher } from "../../src/webhooks/dispatcher.js";
import { createNodeHttpClient } from "../../src/webhooks/http-client.js";
import {
  addWebhook,
  freshWebhookDb,
  manualClock,
  ORG,
  OTHER_ORG,
  startReceiver,
  testContext,
  testDispatcher,
} from "./helpers.js";

async function domainError(
  promise: Promise<unknown>,
): Promise<{ status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DomainError, String(error));
    return { status: (error as DomainError).status, message: (error as Error).message };
  }
  throw new Error("expected a domain error");
}

test("emitEvent writes one row per matching active webhook of the org only", async () => {
  const store = await freshWebhookDb();
  const ctx = testContext(store.db, manualClock());
  try {
    const calls = await addWebhook(ctx, "http://127.0.0.1:9/a", { events: ["call.ended"] });
    const both = await addWebhook(ctx, "http://127.0.0.1:9/b", {
      events: ["call.ended", "crm.lead.created"],
    });
    await addWebhook(ctx, "http://127.0.0.1:9/c", { events: ["call.ended"], active: false });
    await addWebhook(ctx, "http://127.0.0.1:9/d", { events: ["call.ended"] }, OTHER_ORG);

    const ended = await emitEvent(store.db, ORG, "call.ended", { call_id: "x" });
    assert.is(ended.deliveries, 2);
    const lead = await emitEvent(store.db, ORG, "crm.lead.created", { id: 1 });
    assert.is(lead.deliveries, 1);
    assert.equal(
      (await listDeliveries(ctx, ORG, calls.id)).map((d) => d.event),
      ["call.ended"],
    );
    assert.equal((await listDeliveries(ctx, ORG, both.id)).map((d) => d.event).sort(), [
      "call.ended",
      "crm.lead.created",
    ]);
    assert.is(
      (await domainError(emitEvent(store.db, ORG, "ivr.digit", {}))).message,
      "ivr.* events are not implemented",
    );
  } finally {
    await store.close();
  }
});

test("emitEvent joins the caller's transaction: rolled back, nothing is queued", async () => {
  const store = await freshWebhookDb();
  const ctx = testContext(store.db, manualClock());
  try {
    await addWebhook(ctx, "http://127.0.0.1:9/a");
    await store.db
      .transaction()
      .execute(async (trx) => {
        await emitEvent(store.db, ORG, "call.initiated", {}, trx);
        throw new Error("the change failed");
      })
      .catch(() => {});
    assert.equal(await createDeliveryRepository(store.db).countByStatus(), {});
    await store.db.transaction().execute(async (trx) => {
      await emitEvent(store.db, ORG, "call.initiated", {}, trx);
    });
    assert.equal(await createDeliveryRepository(store.db).countByStatus(), { pending: 1 });
  } finally {
    await store.close();
  }
});

test("the running dispatcher delivers an emitted event without being asked", async () => {
  const store = await freshWebhookDb();
  const receiver = await startReceiver();
  const http = createNodeHttpClient({ allowPrivate: true });
  const dispatcher = createDispatcher({ db: store.db, http, pollIntervalMs: 60_000 });
  const ctx = testContext(store.db, () => new Date(), http);
  try {
    await addWebhook(ctx, receiver.url);
    await dispatcher.start();
    // The poll interval is a minute: only the emit signal can make this arrive in time.
    await emitEvent(store.db, ORG, "call.initiated", { live: true });
    await receiver.waitFor(1, 2000);
    assert.equal(JSON.parse(receiver.requests[0]!.body).data, { live: true });
  } finally {
    await dispatcher.stop();
    http.close();
    await receiver.close();
    await store.close();
  }
});

test("CRUD use cases are org-scoped; bounds and defaults", async () => {
  const store = await freshWebhookDb();
  const ctx = testContext(store.db, manualClock());
  try {
    const hook = await addWebhook(ctx, "http://127.0.0.1:9/a");
    assert.is(hook.retry_count, 5);
    assert.is(hook.timeout, 5000);
    assert.is(hook.active, true);
    assert.is(hook.secret, null);
    // One at a time: started together, a rejection could come before its check is attached
    // (PostgreSQL runs them concurrently) and end the run as unhandled.
    for (const call of [
      () => getWebhook(ctx, OTHER_ORG, hook.id),
      () => updateWebhook(ctx, OTHER_ORG, hook.id, { active: false }),
      () => deleteWebhook(ctx, OTHER_ORG, hook.id),
      () => testWebhook(ctx, OTHER_ORG, hook.id),
      () => listDeliveries(ctx, OTHER_ORG, hook.id),
    ]) {
      assert.equal(await domainError(call()), { status: 404, message: "Webhook not found" });
    }
    assert.equal(await listWebhooks(ctx, OTHER_ORG), []);
    assert.equal(await domainError(updateWebhook(ctx, ORG, hook.id, { retry_count: 11 })), {
      status: 400,
      message: "retry_count must be an integer from 0 to 10",
    });
    assert.equal(await domainError(updateWebhook(ctx, ORG, hook.id, { timeout: 999 })), {
      status: 400,
      message: "timeout must be an integer from 1000 to 30000",
    });
    assert.equal(await domainError(updateWebhook(ctx, ORG, hook.id, { secret: "short" })), {
      status: 400,
      message: "secret must be 16 to 256 characters long",
    });
    const changed = await updateWebhook(ctx, ORG, hook.id, {
      events: ["queue.entered"],
      secret: "0123456789abcdef-secret",
      timeout: 1000,
    });
    assert.equal(changed.events, ["queue.entered"]);
    assert.is(changed.secret, "…cret");
    assert.is(changed.timeout, 1000);
    await deleteWebhook(ctx, ORG, hook.id);
    assert.equal(await listWebhooks(ctx, ORG), []);
  } finally {
    await store.close();
  }
});

test("test delivery answers status and latency; replay queues a new delivery", async () => {
  const clock = manualClock();
  const store = await freshWebhookDb();
  const receiver = await startReceiver();
  const ctx = testContext(store.db, clock);
  const { dispatcher, http } = testDispatcher(store.db, clock);
  try {
    const hook = await addWebhook(ctx, receiver.url, { secret: "0123456789abcdef-secret" });
    receiver.respond = () => ({ status: 202 });
    const result = await testWebhook(ctx, ORG, hook.id);
    assert.is(result.success, true);
    assert.is(result.status_code, 202);
    assert.ok(result.latency_ms >= 0);
    const sent = receiver.requests[0]!;
    assert.is(sent.headers["x-pbx-event"], "webhook.test");
    assert.ok(String(sent.headers["x-pbx-signature"]).startsWith("sha256="));
    assert.is(JSON.parse(sent.body).id, result.id);

    receiver.respond = () => ({ status: 500 });
    const failed = await testWebhook(ctx, ORG, hook.id);
    assert.is(failed.success, false);
    assert.is(failed.status_code, 500);
    assert.is((await getWebhook(ctx, ORG, hook.id)).last_status, 500);

    const deliveries = await listDeliveries(ctx, ORG, hook.id);
    assert.equal(
      deliveries.map((d) => [d.event, d.status]),
      [
        ["webhook.test", "failed"],
        ["webhook.test", "delivered"],
      ],
    );
    receiver.respond = () => ({ status: 200 });
    const replay = await replayDelivery(ctx, ORG, hook.id, failed.delivery_id);
    assert.is(replay.status, "pending");
    assert.is(replay.replay_of, failed.delivery_id);
    assert.is.not(replay.message_id, deliveries[0]!.message_id);
    assert.equal(await domainError(replayDelivery(ctx, ORG, hook.id, replay.id)), {
      status: 409,
      message: "Delivery is still being attempted",
    });
    assert.is(await dispatcher.runDue(), 1);
    assert.is(JSON.parse(receiver.requests[2]!.body).event, "webhook.test");
    assert.equal(
      await domainError(replayDelivery(ctx, ORG, hook.id, "00000000-0000-4000-8000-000000000000")),
      { status: 404, message: "Delivery not found" },
    );
  } finally {
    http.close();
    await receiver.close();
    await store.close();
  }
});

test("simulateCallEvent emits the call lifecycle, or one named call event", async () => {
  const clock = manualClock();
  const store = await freshWebhookDb();
  const receiver = await startReceiver();
  const ctx = testContext(store.db, clock);
  const { dispatcher, http } = testDispatcher(store.db, clock, { concurrency: 1 });
  try {
    await addWebhook(ctx, receiver.url, {
      events: ["call.initiated", "call.ringing", "call.answered", "call.ended", "call.failed"],
    });
    const lifecycle = await simulateCallEvent(ctx, ORG, { call_id: "sim-1" });
    assert.equal(
      lifecycle.events.map((e) => [e.event, e.deliveries]),
      [
        ["call.initiated", 1],
        ["call.ringing", 1],
        ["call.answered", 1],
        ["call.ended", 1],
      ],
    );
    assert.is(await dispatcher.runDue(), 4);
    const bodies = receiver.requests.map((r) => JSON.parse(r.body));
    assert.equal(
      bodies.map((b) => b.event),
      ["call.initiated", "call.ringing", "call.answered", "call.ended"],
    );
    assert.ok(bodies.every((b) => b.data.call_id === "sim-1" && b.data.simulated === true));
    // Four events in the same millisecond still get four distinct ids.
    assert.is(new Set(bodies.map((b) => b.id)).size, 4);

    const one = await simulateCallEvent(ctx, ORG, { event: "call.failed" });
    assert.equal(
      one.events.map((e) => e.event),
      ["call.failed"],
    );
    assert.equal(await domainError(simulateCallEvent(ctx, ORG, { event: "queue.entered" })), {
      status: 400,
      message:
        "event must be one of: call.initiated, call.ringing, call.answered, call.ended, call.failed",
    });
    assert.equal(await domainError(simulateCallEvent(ctx, ORG, { event: "ivr.dtmf" })), {
      status: 400,
      message: "ivr.* events are not implemented",
    });
  } finally {
    http.close();
    await receiver.close();
    await store.close();
  }
});

test.run();
