// At-least-once across a crash: a dispatcher process with 100 pending deliveries is killed with
// SIGKILL in the middle; after a restart every event arrives (the rows it left in flight once
// their claim's lease has run out), and a repeat happens only for a delivery that was in flight
// at the kill (recognisable by its id prefix).
import { spawn } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { emitEvent } from "../../src/domain/webhooks/webhook-events.js";
import { createDeliveryRepository } from "../../src/store/webhook-delivery-repository.js";
import { createDispatcher } from "../../src/webhooks/dispatcher.js";
import { createNodeHttpClient } from "../../src/webhooks/http-client.js";
import {
  addWebhook,
  freshWebhookDb,
  ORG,
  openWebhookDb,
  startReceiver,
  testContext,
} from "./helpers.js";

const child = new URL("./crash-child.ts", import.meta.url).pathname;
const CONCURRENCY = 4;

test("SIGKILL with 100 pending deliveries: all 100 arrive after a restart", async () => {
  const store = await freshWebhookDb();
  const receiver = await startReceiver();
  // Slow answers keep several attempts in flight when the kill lands.
  receiver.respond = () => new Promise((resolve) => setTimeout(() => resolve({ status: 200 }), 15));
  const setupHttp = createNodeHttpClient({ allowPrivate: true });
  try {
    const ctx = testContext(store.db, () => new Date(), setupHttp);
    // The shortest timeout: the killed child's claims run out 1.5 s after it made them.
    await addWebhook(ctx, receiver.url, { secret: "0123456789abcdef-secret", timeout: 1000 });
    const messageIds = new Set<string>();
    for (let i = 0; i < 100; i++) {
      await emitEvent(store.db, ORG, "call.initiated", { n: i });
    }
    for (const row of await store.db
      .selectFrom("webhook_deliveries")
      .select("message_id")
      .execute()) {
      messageIds.add(row.message_id as string);
    }
    assert.is(messageIds.size, 100);

    const proc = spawn(
      process.execPath,
      ["--import", "tsx", child, store.file, String(CONCURRENCY)],
      {
        stdio: ["ignore", "pipe", "inherit"],
        env: { ...process.env, PBX_CRASH_CHILD: "1" },
      },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      proc.on("exit", (_code, signal) => resolve(signal)),
    );
    await receiver.waitFor(30, 20_000);
    proc.kill("SIGKILL");
    assert.is(await exited, "SIGKILL");
    const receivedBeforeKill = receiver.requests.length;
    assert.ok(receivedBeforeKill < 100, `the kill came too late (${receivedBeforeKill} received)`);

    const db = await openWebhookDb(store.file, false);
    const http = createNodeHttpClient({ allowPrivate: true });
    const dispatcher = createDispatcher({ db, http, concurrency: CONCURRENCY });
    try {
      const before = await createDeliveryRepository(db).countByStatus();
      assert.ok((before.pending ?? 0) + (before.in_flight ?? 0) > 0, "work was left");
      await dispatcher.start();
      const deadline = Date.now() + 20_000;
      for (;;) {
        const counts = await createDeliveryRepository(db).countByStatus();
        if (counts.delivered === 100) break;
        assert.ok(Date.now() < deadline, `not all delivered: ${JSON.stringify(counts)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await dispatcher.stop();
      http.close();
      await db.destroy();
    }

    const prefixes = receiver.requests.map((r) => {
      const id = JSON.parse(r.body).id as string;
      return id.slice(0, id.lastIndexOf("_"));
    });
    assert.equal(new Set(prefixes), messageIds, "every event arrived");
    const seen = new Map<string, number[]>();
    for (const [index, prefix] of prefixes.entries()) {
      seen.set(prefix, [...(seen.get(prefix) ?? []), index]);
    }
    const repeated = [...seen.values()].filter((indexes) => indexes.length > 1);
    assert.ok(
      repeated.length <= CONCURRENCY,
      `${repeated.length} repeats > ${CONCURRENCY} in flight`,
    );
    for (const indexes of repeated) {
      assert.is(indexes.length, 2);
      assert.ok(indexes[0]! < receivedBeforeKill, "a repeat was first sent before the kill");
      assert.ok(indexes[1]! >= receivedBeforeKill, "and again after the restart");
    }
  } finally {
    setupHttp.close();
    await receiver.close();
    await store.close();
  }
});

test.run();
