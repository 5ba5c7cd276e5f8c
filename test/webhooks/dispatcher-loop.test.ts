// The dispatcher's own loop with injected timers and clock (no sleeping on the schedule), and
// the node:http client's timeout and connect-time SSRF guard.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Timers } from "../../src/clock.js";
import { emitEvent } from "../../src/domain/webhooks/webhook-events.js";
import type { Db } from "../../src/store/database.js";
import { storeDialect } from "../../src/store/dialect.js";
import { createDeliveryRepository } from "../../src/store/webhook-delivery-repository.js";
import { createDispatcher } from "../../src/webhooks/dispatcher.js";
import { createNodeHttpClient, type WebhookHttpClient } from "../../src/webhooks/http-client.js";
import {
  addWebhook,
  freshWebhookDb,
  manualClock,
  ORG,
  startReceiver,
  testContext,
} from "./helpers.js";

/** Timers that only fire when the test says so. */
function fakeTimers() {
  const pending = new Map<number, { callback: () => void; ms: number }>();
  let nextId = 1;
  const timers: Timers & { pending: typeof pending; fire(): void } = {
    pending,
    now: () => 0,
    setTimer(ms, callback) {
      const id = nextId++;
      pending.set(id, { callback, ms });
      return { cancel: () => pending.delete(id) };
    },
    fire() {
      const all = [...pending.values()];
      pending.clear();
      for (const t of all) t.callback();
    },
  };
  return timers;
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 5000; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never happened: ${what}`);
}

/** Counts the transactions `db` starts from now on (a commit each), until `restore`. */
function countTransactions(db: Db) {
  const transaction = db.transaction.bind(db);
  const counter = {
    count: 0,
    reset: () => {
      counter.count = 0;
    },
    restore: () => {
      db.transaction = transaction;
    },
  };
  db.transaction = () => {
    counter.count++;
    return transaction();
  };
  return counter;
}
test("the loop schedules its next look at the retry time and retries when the timer fires", async () => {
  const clock = manualClock();
  const timers = fakeTimers();
  const store = await freshWebhookDb();
  const receiver = await startReceiver();
  const http = createNodeHttpClient({ allowPrivate: true });
  const dispatcher = createDispatcher({ db: store.db, http, clock, timers, pollIntervalMs: 1000 });
  const ctx = testContext(store.db, clock, http);
  const repo = createDeliveryRepository(store.db);
  try {
    receiver.respond = (_r, index) => ({ status: index === 0 ? 500 : 200 });
    await addWebhook(ctx, receiver.url);
    await dispatcher.start();
    await emitEvent(store.db, ORG, "call.initiated", {}, undefined, clock);
    await until(
      async () => (await repo.countByStatus()).pending === 1 && receiver.requests.length === 1,
      "first attempt recorded",
    );
    await until(async () => [...timers.pending.values()].some((t) => t.ms === 1000), "a 1 s timer");
    // Firing early (clock not moved) finds nothing due: no second attempt.
    timers.fire();
    await until(async () => timers.pending.size > 0, "re-armed");
    assert.is(receiver.requests.length, 1);
    clock.advance(1000);
    timers.fire();
    await until(async () => (await repo.countByStatus()).delivered === 1, "delivered on retry");
    assert.is(JSON.parse(receiver.requests[1]!.body).attempt, 2);
  } finally {
    await dispatcher.stop();
    http.close();
    await receiver.close();
    await store.close();
  }
});

test("stop() waits for attempts in flight and claims nothing more", async () => {
  const store = await freshWebhookDb();
  const receiver = await startReceiver();
  const http = createNodeHttpClient({ allowPrivate: true });
  const dispatcher = createDispatcher({ db: store.db, http, concurrency: 2 });
  const ctx = testContext(store.db, () => new Date(), http);
  try {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.respond = async () => {
      await gate;
      return { status: 200 };
    };
    await addWebhook(ctx, receiver.url);
    await dispatcher.start();
    for (let i = 0; i < 5; i++) await emitEvent(store.db, ORG, "call.initiated", { i });
    await receiver.waitFor(2);
    const stopped = dispatcher.stop();
    release();
    await stopped;
    const counts = await createDeliveryRepository(store.db).countByStatus();
    assert.is(counts.delivered, 2, "the two in flight finished and were recorded");
    assert.is(counts.pending, 3, "nothing else was claimed");
    assert.is(counts.in_flight, undefined);
  } finally {
    http.close();
    await receiver.close();
    await store.close();
  }
});

test("attempts answered in the same turn of the event loop are recorded in one commit", async () => {
  const store = await freshWebhookDb();
  const receiver = await startReceiver();
  const http = createNodeHttpClient({ allowPrivate: true });
  const ctx = testContext(store.db, () => new Date(), http);
  // Every answer waits until all eight requests are in, then all eight arrive together.
  const answers: (() => void)[] = [];
  const client: WebhookHttpClient = {
    post: () =>
      new Promise((resolve) => {
        answers.push(() => resolve({ status: 200, retryAfter: null, bodySnippet: "" }));
        if (answers.length === 8) for (const answer of answers) answer();
      }),
  };
  const commits = countTransactions(store.db);
  try {
    await addWebhook(ctx, receiver.url);
    for (let i = 0; i < 8; i++) await emitEvent(store.db, ORG, "call.initiated", { i });
    commits.reset();
    const dispatcher = createDispatcher({ db: store.db, http: client, concurrency: 8 });
    assert.is(await dispatcher.runDue(), 8);
    // On PostgreSQL each claim is a transaction too: the claim of the eight, and the empty one.
    const claims = storeDialect(store.db) === "postgres" ? 2 : 0;
    assert.is(commits.count, 1 + claims, "one group commit for the eight attempts");
    const counts = await createDeliveryRepository(store.db).countByStatus();
    assert.is(counts.delivered, 8);
  } finally {
    commits.restore();
    http.close();
    await receiver.close();
    await store.close();
  }
});

test("an event emitted alone commits its timestamps and rows together", async () => {
  const store = await freshWebhookDb();
  const http = createNodeHttpClient({ allowPrivate: true });
  const ctx = testContext(store.db, () => new Date(), http);
  const commits = countTransactions(store.db);
  try {
    await addWebhook(ctx, "http://127.0.0.1:9/hook");
    commits.reset();
    const emitted = await emitEvent(store.db, ORG, "call.initiated", { i: 1 });
    assert.is(emitted.deliveries, 1);
    assert.is(commits.count, 1, "one transaction of its own");
  } finally {
    commits.restore();
    http.close();
    await store.close();
  }
});

test("the node client times out, and refuses private addresses at connect time", async () => {
  const hanging = createServer(() => {});
  await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
  const port = (hanging.address() as AddressInfo).port;
  const open = createNodeHttpClient({ allowPrivate: true });
  const guarded = createNodeHttpClient({ allowPrivate: false });
  try {
    const error = await open.post(`http://127.0.0.1:${port}/`, "{}", {}, 50).catch((e) => e);
    assert.match(String(error), "timed out after 50 ms");
    for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`]) {
      const refused = await guarded.post(url, "{}", {}, 1000).catch((e) => e);
      assert.match(String(refused), "must not point to a loopback", url);
    }
  } finally {
    open.close();
    guarded.close();
    hanging.closeAllConnections();
    await new Promise<void>((resolve) => hanging.close(() => resolve()));
  }
});

test.run();
