// The webhook outbox shared by several replicas: two store handles on one store (one SQLite file,
// or on npm run test:pg one PostgreSQL database, where claims take `FOR UPDATE SKIP LOCKED`) stand
// for two replicas. Events emitted by both at the same instant still get different `webhook-id`s; a
// claim is a lease, so a row whose replica died mid-attempt is claimed again once the lease has
// run out (same `webhook-id`), and the dead claim's late record does not overwrite the new one.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { emitEvent } from "../../src/domain/webhooks/webhook-events.js";
import { type Db, openStore } from "../../src/store/database.js";
import { createDeliveryRepository } from "../../src/store/webhook-delivery-repository.js";
import { insertOrg } from "../store/helpers.js";
import { freshStoreLocation } from "../store/test-database.js";
import { addWebhook, manualClock, ORG, testContext } from "../webhooks/helpers.js";

/** Two handles on one fresh store, as two replicas have. */
async function twoReplicas(): Promise<{ one: Db; two: Db; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "pbx-replicas-"));
  const store = await freshStoreLocation(join(dir, "pbx.db"));
  const one = await openStore(store.location);
  const two = await openStore(store.location);
  await insertOrg(one, ORG);
  return {
    one,
    two,
    async close() {
      await one.destroy();
      await two.destroy();
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("events emitted by two replicas in the same microsecond get distinct webhook-ids", async () => {
  const { one, two: other, close } = await twoReplicas();
  const store = { db: one };
  const clock = manualClock();
  try {
    const ctx = testContext(store.db, clock);
    await addWebhook(ctx, "http://127.0.0.1:9/hook");
    await addWebhook(ctx, "http://127.0.0.1:9/other");
    // Interleaved, at one frozen time: a per-process counter would hand both the same values.
    for (let i = 0; i < 20; i++) {
      await emitEvent(store.db, ORG, "call.initiated", { n: i }, undefined, clock);
      await other.transaction().execute(async (trx) => {
        await emitEvent(other, ORG, "call.initiated", { n: 100 + i }, trx, clock);
      });
    }
    const rows = await store.db
      .selectFrom("webhook_deliveries")
      .select(["webhook_id", "message_id", "event_id"])
      .execute();
    assert.is(rows.length, 80);
    assert.is(new Set(rows.map((r) => r.message_id)).size, 80, "no webhook-id given twice");
    const base = clock().getTime() * 1000;
    for (const row of rows) {
      // The SPEC §6 shape: `<webhookId>_<event time in µs>`, at or just above the event time.
      const [hook, micros] = row.message_id.split("_");
      assert.is(hook, row.webhook_id);
      assert.ok(Number(micros) >= base && Number(micros) < base + 100, row.message_id);
    }
  } finally {
    await close();
  }
});

test("a claim is a lease: a dead replica's row is claimed again after it, with the same id", async () => {
  const { one, two: other, close } = await twoReplicas();
  const store = { db: one };
  const clock = manualClock();
  try {
    const ctx = testContext(store.db, clock);
    await addWebhook(ctx, "http://127.0.0.1:9/hook", { timeout: 2000 });
    await emitEvent(store.db, ORG, "call.initiated", { n: 1 }, undefined, clock);
    const mine = createDeliveryRepository(store.db);
    const theirs = createDeliveryRepository(other);
    const now = () => clock().toISOString();
    const [claimed] = await mine.claimDue(now(), 10, "replica-1", 1000);
    assert.ok(claimed);
    assert.is(claimed!.lease_until, new Date(clock().getTime() + 3000).toISOString());
    // While the lease runs, nobody else gets it.
    assert.equal(await theirs.claimDue(now(), 10, "replica-2", 1000), []);
    clock.advance(2999);
    assert.equal(await theirs.claimDue(now(), 10, "replica-2", 1000), []);
    // Replica 1 died without recording: at the end of the lease replica 2 takes the row.
    clock.advance(1);
    const [again] = await theirs.claimDue(now(), 10, "replica-2", 1000);
    assert.is(again?.id, claimed!.id);
    assert.is(again?.message_id, claimed!.message_id, "the same webhook-id on the retry");
    assert.is(again?.attempt, 0, "the unrecorded attempt is made again as attempt 1");
    // A late record from the first claim (it was only slow) leaves replica 2's claim alone.
    const record = {
      status: "delivered" as const,
      attempt: 1,
      next_attempt_at: null,
      last_attempt_at: now(),
      last_status: 200,
      last_latency_ms: 1,
      last_error: null,
    };
    await mine.recordAttempt(claimed!.id, record, now(), "replica-1");
    let row = await mine.findById(ORG, claimed!.webhook_id, claimed!.id);
    assert.is(row?.status, "in_flight");
    assert.is(row?.claim_token, "replica-2");
    await theirs.recordAttempt(claimed!.id, record, now(), "replica-2");
    row = await mine.findById(ORG, claimed!.webhook_id, claimed!.id);
    assert.is(row?.status, "delivered");
    assert.is(row?.lease_until, null);
  } finally {
    await close();
  }
});

test.run();
