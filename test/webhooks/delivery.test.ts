// Deliveries to a real HTTP receiver on loopback: wire format, both signatures, the retry
// schedule on an injected clock, Retry-After, 410, deactivation and cancellation.
import { createHmac, timingSafeEqual } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { emitEvent } from "../../src/domain/webhooks/webhook-events.js";
import { getWebhook, listDeliveries, updateWebhook } from "../../src/domain/webhooks/webhooks.js";
import { createDeliveryRepository } from "../../src/store/webhook-delivery-repository.js";
import {
  addWebhook,
  freshWebhookDb,
  manualClock,
  ORG,
  startReceiver,
  testContext,
  testDispatcher,
} from "./helpers.js";

const WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

async function setup(clock: () => Date = manualClock()) {
  const store = await freshWebhookDb();
  const receiver = await startReceiver();
  const ctx = testContext(store.db, clock);
  const { dispatcher, http } = testDispatcher(store.db, clock);
  return {
    store,
    receiver,
    ctx,
    dispatcher,
    async close() {
      http.close();
      await receiver.close();
      await store.close();
    },
  };
}

test("wire format of §6, X-PBX-Signature (node:crypto) and Standard Webhooks signature", async () => {
  // Real time: the standardwebhooks library checks the timestamp against its own clock.
  const t = await setup(() => new Date());
  try {
    const hook = await addWebhook(t.ctx, t.receiver.url, {
      secret: WHSEC,
      events: ["call.ended", "call.initiated"],
    });
    assert.is(hook.secret, WHSEC, "creation answers the secret in full");
    await emitEvent(t.store.db, ORG, "call.initiated", { call_id: "c1", from: "+15550100" });
    assert.is(await t.dispatcher.runDue(), 1);

    const [request] = t.receiver.requests;
    assert.ok(request);
    assert.is(request.method, "POST");
    const body = JSON.parse(request.body);
    assert.equal(Object.keys(body), [
      "id",
      "event",
      "timestamp",
      "organization_id",
      "data",
      "attempt",
    ]);
    assert.match(body.id, new RegExp(`^${hook.id}_\\d{16}_1$`));
    assert.is(body.event, "call.initiated");
    assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.is(body.organization_id, ORG);
    assert.equal(body.data, { call_id: "c1", from: "+15550100" });
    assert.is(body.attempt, 1);

    const h = request.headers;
    assert.is(h["content-type"], "application/json");
    assert.is(h["x-pbx-event"], "call.initiated");
    assert.is(h["x-pbx-organization"], ORG);
    assert.is(h["x-pbx-timestamp"], body.timestamp);
    assert.is(h["x-pbx-attempt"], "1");

    // X-PBX-Signature: hex HMAC-SHA256 of the exact body bytes, keyed with the secret as given.
    const expected = `sha256=${createHmac("sha256", WHSEC).update(request.body).digest("hex")}`;
    const got = String(h["x-pbx-signature"]);
    assert.ok(timingSafeEqual(Buffer.from(got), Buffer.from(expected)), "X-PBX-Signature");

    // Standard Webhooks: the library verifies with the whsec_ secret as configured.
    assert.is(h["webhook-id"], body.id.replace(/_1$/, ""));
    assert.is(Number(h["webhook-timestamp"]), Math.floor(Date.parse(body.timestamp) / 1000));
    const verified = new Webhook(WHSEC).verify(request.body, {
      "webhook-id": String(h["webhook-id"]),
      "webhook-timestamp": String(h["webhook-timestamp"]),
      "webhook-signature": String(h["webhook-signature"]),
    });
    assert.equal(verified, body);
    // A tampered body fails both.
    const tampered = request.body.replace("c1", "c2");
    assert.throws(() =>
      new Webhook(WHSEC).verify(tampered, {
        "webhook-id": String(h["webhook-id"]),
        "webhook-timestamp": String(h["webhook-timestamp"]),
        "webhook-signature": String(h["webhook-signature"]),
      }),
    );

    const [delivery] = await listDeliveries(t.ctx, ORG, hook.id);
    assert.is(delivery?.status, "delivered");
    assert.is(delivery?.last_status, 200);
    const health = await getWebhook(t.ctx, ORG, hook.id);
    assert.is(health.last_status, 200);
    assert.ok(health.last_delivery);
    assert.is(health.failure_count, 0);
    assert.is(health.secret, "whsec_…LaSw", "masked after creation");
  } finally {
    await t.close();
  }
});

test("a non-whsec secret: Standard Webhooks key is its UTF-8 bytes; no secret, no signature", async () => {
  const t = await setup(() => new Date());
  try {
    const secret = "plain-text-secret-0123456789";
    await addWebhook(t.ctx, t.receiver.url, { secret });
    await addWebhook(t.ctx, `${t.receiver.url}?unsigned`);
    await emitEvent(t.store.db, ORG, "call.initiated", { n: 1 });
    assert.is(await t.dispatcher.runDue(), 2);
    const signed = t.receiver.requests.find((r) => !r.url.includes("unsigned"))!;
    const unsigned = t.receiver.requests.find((r) => r.url.includes("unsigned"))!;
    new Webhook(`whsec_${Buffer.from(secret).toString("base64")}`).verify(signed.body, {
      "webhook-id": String(signed.headers["webhook-id"]),
      "webhook-timestamp": String(signed.headers["webhook-timestamp"]),
      "webhook-signature": String(signed.headers["webhook-signature"]),
    });
    assert.is(
      signed.headers["x-pbx-signature"],
      `sha256=${createHmac("sha256", secret).update(signed.body).digest("hex")}`,
    );
    assert.is(unsigned.headers["x-pbx-signature"], undefined);
    assert.is(unsigned.headers["webhook-signature"], undefined);
    assert.ok(unsigned.headers["webhook-id"]);
  } finally {
    await t.close();
  }
});

test("the retry schedule 1, 5, 15, 60, 300 s is followed, then failed", async () => {
  const clock = manualClock();
  const t = await setup(clock);
  try {
    t.receiver.respond = () => ({ status: 500, body: "boom" });
    const hook = await addWebhook(t.ctx, t.receiver.url);
    await emitEvent(t.store.db, ORG, "call.initiated", {}, undefined, clock);
    const gaps = [1000, 5000, 15000, 60000, 300000];
    assert.is(await t.dispatcher.runDue(), 1);
    for (const gap of gaps) {
      clock.advance(gap - 1);
      assert.is(await t.dispatcher.runDue(), 0, `nothing before ${gap} ms`);
      clock.advance(1);
      assert.is(await t.dispatcher.runDue(), 1, `the retry at ${gap} ms`);
    }
    clock.advance(3_600_000);
    assert.is(await t.dispatcher.runDue(), 0, "retry_count 5: six attempts in all");
    assert.equal(
      t.receiver.requests.map((r) => JSON.parse(r.body).attempt),
      [1, 2, 3, 4, 5, 6],
    );
    const ids = t.receiver.requests.map((r) => JSON.parse(r.body).id as string);
    const prefix = ids[0]!.replace(/_1$/, "");
    assert.equal(
      ids,
      [1, 2, 3, 4, 5, 6].map((n) => `${prefix}_${n}`),
    );
    assert.equal(new Set(t.receiver.requests.map((r) => r.headers["webhook-id"])).size, 1);
    const [delivery] = await listDeliveries(t.ctx, ORG, hook.id);
    assert.is(delivery?.status, "failed");
    assert.is(delivery?.attempt, 6);
    assert.is(delivery?.last_error, "HTTP 500: boom");
    const health = await getWebhook(t.ctx, ORG, hook.id);
    assert.is(health.failure_count, 6);
    assert.is(health.last_status, 500);
    assert.is(health.consecutive_failed_deliveries, 1);
    assert.ok(health.active);
  } finally {
    await t.close();
  }
});

test("a receiver down for the first three attempts gets the event on the fourth", async () => {
  const clock = manualClock();
  const t = await setup(clock);
  try {
    const port = t.receiver.port;
    const hook = await addWebhook(t.ctx, t.receiver.url);
    await t.receiver.close(); // down: connection refused
    await emitEvent(t.store.db, ORG, "call.initiated", { call_id: "down" }, undefined, clock);
    await t.dispatcher.runDue();
    clock.advance(1000);
    await t.dispatcher.runDue();
    clock.advance(5000);
    await t.dispatcher.runDue();
    let [delivery] = await listDeliveries(t.ctx, ORG, hook.id);
    assert.is(delivery?.attempt, 3);
    assert.is(delivery?.status, "pending");
    assert.is(delivery?.last_status, null);
    assert.match(delivery?.last_error ?? "", "ECONNREFUSED");
    assert.is((await getWebhook(t.ctx, ORG, hook.id)).failure_count, 3);

    const back = await startReceiver(port);
    try {
      clock.advance(15000);
      assert.is(await t.dispatcher.runDue(), 1);
      assert.is(back.requests.length, 1);
      const body = JSON.parse(back.requests[0]!.body);
      assert.is(body.attempt, 4);
      assert.equal(body.data, { call_id: "down" });
      [delivery] = await listDeliveries(t.ctx, ORG, hook.id);
      assert.is(delivery?.status, "delivered");
      const health = await getWebhook(t.ctx, ORG, hook.id);
      assert.is(health.failure_count, 0, "a success resets the failure run");
      assert.is(health.last_status, 200);
    } finally {
      await back.close();
    }
  } finally {
    await t.close();
  }
});

test("410 Gone deactivates the webhook and cancels its other pending deliveries", async () => {
  const clock = manualClock();
  const t = await setup(clock);
  try {
    const hook = await addWebhook(t.ctx, t.receiver.url);
    t.receiver.respond = (_r, index) => (index === 0 ? { status: 410 } : { status: 200 });
    await emitEvent(t.store.db, ORG, "call.initiated", { n: 1 }, undefined, clock);
    assert.is(await t.dispatcher.runDue(), 1);
    await emitEvent(t.store.db, ORG, "call.initiated", { n: 2 }, undefined, clock);
    assert.equal(
      await emitEvent(t.store.db, ORG, "call.initiated", { n: 3 }, undefined, clock).then(
        (e) => e.deliveries,
      ),
      0,
      "an inactive webhook gets no new deliveries",
    );
    assert.is(await t.dispatcher.runDue(), 0);
    const health = await getWebhook(t.ctx, ORG, hook.id);
    assert.is(health.active, false);
    assert.is(health.deactivated_reason, "gone");
    assert.is(health.last_status, 410);
    const [first] = (await listDeliveries(t.ctx, ORG, hook.id)).reverse();
    assert.is(first?.status, "failed");
    assert.is(t.receiver.requests.length, 1);
  } finally {
    await t.close();
  }
});

test("Retry-After on 429 and 503 is honoured", async () => {
  const clock = manualClock();
  const t = await setup(clock);
  try {
    const hook = await addWebhook(t.ctx, t.receiver.url);
    t.receiver.respond = (_r, index) =>
      index === 0
        ? { status: 429, headers: { "retry-after": "120" } }
        : index === 1
          ? { status: 503, headers: { "retry-after": "30" } }
          : { status: 204 };
    await emitEvent(t.store.db, ORG, "call.initiated", {}, undefined, clock);
    const start = clock.now.getTime();
    await t.dispatcher.runDue();
    let [delivery] = await listDeliveries(t.ctx, ORG, hook.id);
    assert.is(delivery?.next_attempt_at, new Date(start + 120_000).toISOString());
    clock.advance(119_999);
    assert.is(await t.dispatcher.runDue(), 0, "not before Retry-After");
    clock.advance(1);
    assert.is(await t.dispatcher.runDue(), 1);
    [delivery] = await listDeliveries(t.ctx, ORG, hook.id);
    assert.is(delivery?.next_attempt_at, new Date(start + 150_000).toISOString());
    clock.advance(30_000);
    assert.is(await t.dispatcher.runDue(), 1);
    [delivery] = await listDeliveries(t.ctx, ORG, hook.id);
    assert.is(delivery?.status, "delivered");
    assert.is(delivery?.last_status, 204);
  } finally {
    await t.close();
  }
});

test("a run of failed deliveries deactivates the webhook (threshold injected: 3)", async () => {
  const clock = manualClock();
  const store = await freshWebhookDb();
  const receiver = await startReceiver();
  const ctx = testContext(store.db, clock);
  const { dispatcher, http } = testDispatcher(store.db, clock, { deactivateAfter: 3 });
  try {
    receiver.respond = () => ({ status: 500 });
    const hook = await addWebhook(ctx, receiver.url, { retry_count: 0 });
    for (let i = 0; i < 2; i++) {
      await emitEvent(store.db, ORG, "call.initiated", { i }, undefined, clock);
      await dispatcher.runDue();
    }
    assert.is((await getWebhook(ctx, ORG, hook.id)).consecutive_failed_deliveries, 2);
    assert.ok((await getWebhook(ctx, ORG, hook.id)).active);
    await emitEvent(store.db, ORG, "call.initiated", { i: 2 }, undefined, clock);
    await dispatcher.runDue();
    const health = await getWebhook(ctx, ORG, hook.id);
    assert.is(health.active, false);
    assert.is(health.deactivated_reason, "too_many_failures");
    assert.is(health.consecutive_failed_deliveries, 3);
    // Reactivating clears the reason and the run.
    const again = await updateWebhook(ctx, ORG, hook.id, { active: true });
    assert.is(again.active, true);
    assert.is(again.deactivated_reason, null);
    assert.is(again.consecutive_failed_deliveries, 0);
  } finally {
    http.close();
    await receiver.close();
    await store.close();
  }
});

test("deliveries of a deactivated or deleted webhook stop (cancelled)", async () => {
  const clock = manualClock();
  const t = await setup(clock);
  try {
    t.receiver.respond = () => ({ status: 500 });
    const hook = await addWebhook(t.ctx, t.receiver.url);
    await emitEvent(t.store.db, ORG, "call.initiated", {}, undefined, clock);
    await t.dispatcher.runDue(); // first attempt fails, a retry is pending
    await updateWebhook(t.ctx, ORG, hook.id, { active: false });
    clock.advance(10_000);
    assert.is(await t.dispatcher.runDue(), 0);
    const [delivery] = await listDeliveries(t.ctx, ORG, hook.id);
    assert.is(delivery?.status, "cancelled");

    // A row that is already due when its webhook disappears is cancelled when claimed.
    const other = await addWebhook(t.ctx, t.receiver.url);
    await emitEvent(t.store.db, ORG, "call.initiated", {}, undefined, clock);
    await t.store.db.deleteFrom("webhooks").where("id", "=", other.id).execute();
    assert.is(await t.dispatcher.runDue(), 1);
    const counts = await createDeliveryRepository(t.store.db).countByStatus();
    assert.equal(counts, { cancelled: 2 });
    assert.is(t.receiver.requests.length, 1);
  } finally {
    await t.close();
  }
});

test.run();
