// The dispatcher: claims due outbox rows with bounded concurrency and delivers them, in the
// server process, started and stopped with it. Clock, timers and HTTP client are injected so
// tests drive time instead of sleeping. At-least-once: on start, rows a crash left in flight are
// made due again (a receiver may see such an attempt twice; its body id tells it).
//
// Throughput comes from doing little per delivery in the store: rows are claimed in batches,
// their webhooks read with one query per batch, and finished attempts are recorded in group
// commits (every attempt that finishes while a commit runs goes into the next one). A slot is
// freed only once its attempt is recorded, so a crash never loses more than what is in flight.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../domain/ports.js";
import { decide, type FinishedAttempt, recordAttempts, sendAttempt } from "./attempt.js";
import { createDeliveryRepository } from "./delivery-repository.js";
import type { WebhookHttpClient } from "./http-client.js";
import { outboxSignal } from "./outbox.js";
import { plainSecrets, type SecretSealer } from "./secrets.js";
import { DEACTIVATE_AFTER_FAILED_DELIVERIES } from "./settings.js";
import type { AnyDb, DeliveryRow, WebhookRow } from "./tables.js";
import { createWebhookRepository } from "./webhook-repository.js";

/** The timer functions the dispatcher uses (globals by default). */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemTimers: Timers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface DispatcherLogger {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface DispatcherOptions {
  /** The database itself (not a transaction): attempts are recorded in their own transactions. */
  db: AnyDb;
  http: WebhookHttpClient;
  secrets?: SecretSealer;
  clock?: Clock;
  timers?: Timers;
  /** Attempts in flight at once (default 16). */
  concurrency?: number;
  /** Longest wait between two looks at the outbox when idle (default 1000 ms). */
  pollIntervalMs?: number;
  /** Consecutive failed deliveries that deactivate a webhook (default 50). */
  deactivateAfter?: number;
  logger?: DispatcherLogger;
}

export interface WebhookDispatcher {
  /** Makes rows left in flight due again, then delivers until stopped. */
  start(): Promise<void>;
  /** Claims nothing more and waits for the attempts in flight. */
  stop(): Promise<void>;
  /** Delivers every row due now, and rows that become due meanwhile; resolves with the count. */
  runDue(): Promise<number>;
  /** Looks at the outbox now (called on every emit in this process). */
  wake(): void;
}

interface QueuedRecord {
  attempt: FinishedAttempt;
  done: () => void;
}

/** A dispatcher over `options.db`; nothing runs until `start()` or `runDue()`. */
export function createDispatcher(options: DispatcherOptions): WebhookDispatcher {
  const { db, http } = options;
  const secrets = options.secrets ?? plainSecrets;
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const concurrency = Math.max(1, options.concurrency ?? 16);
  // Claim again only when this many or fewer are in flight, so claims come in batches.
  const lowWater = Math.floor(concurrency / 2);
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const recordOptions = {
    retries: true,
    deactivateAfter: options.deactivateAfter ?? DEACTIVATE_AFTER_FAILED_DELIVERIES,
  };
  const deliveries = createDeliveryRepository(db);
  const webhooks = createWebhookRepository(db);

  let inFlight = 0;
  const settled = new Set<Promise<void>>();
  let running = false;
  let pumping = false;
  let pumpAgain = false;
  let timer: unknown = null;
  let timerAt = Number.POSITIVE_INFINITY;
  /** Earliest retry this dispatcher scheduled (rows written by others are found by polling). */
  let nextRetryAt = Number.POSITIVE_INFINITY;

  const queue: QueuedRecord[] = [];
  let flushing = false;

  async function flush(): Promise<void> {
    if (flushing) return;
    flushing = true;
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0);
        try {
          const deactivations = await recordAttempts(
            db,
            batch.map((b) => b.attempt),
            clock(),
            recordOptions,
          );
          for (const d of deactivations) {
            options.logger?.info(
              { webhook_id: d.webhookId, reason: d.reason },
              "webhook deactivated",
            );
          }
          for (const { attempt } of batch) {
            if (attempt.decision.nextAttemptAt !== null) {
              nextRetryAt = Math.min(nextRetryAt, Date.parse(attempt.decision.nextAttemptAt));
            }
          }
        } catch (error) {
          // A store failure: these rows stay in flight and are retried after the next restart.
          options.logger?.error({ err: error, count: batch.length }, "recording attempts failed");
        }
        for (const { done } of batch) done();
      }
    } finally {
      flushing = false;
    }
  }

  function record(attempt: FinishedAttempt): Promise<void> {
    return new Promise((resolve) => {
      queue.push({ attempt, done: resolve });
      void flush();
    });
  }

  async function deliver(row: DeliveryRow, webhook: WebhookRow | undefined): Promise<void> {
    try {
      if (webhook?.active !== 1) {
        await deliveries.setStatus(row.id, "cancelled", clock().toISOString());
        return;
      }
      const outcome = await sendAttempt(http, secrets, webhook, row, clock());
      const decision = decide(webhook, outcome, clock(), recordOptions);
      await record({ webhook, row, outcome, decision });
    } catch (error) {
      options.logger?.error({ err: error, delivery_id: row.id }, "webhook delivery failed");
    }
  }

  /** Claims up to `limit` due rows and starts them; resolves with their completion promises. */
  async function claimAndStart(limit: number): Promise<Promise<void>[]> {
    const rows = await deliveries.claimDue(clock().toISOString(), limit, randomUUID());
    if (rows.length === 0) return [];
    const hooks = await webhooks.findManyByIds([...new Set(rows.map((r) => r.webhook_id))]);
    return rows.map((row) => deliver(row, hooks.get(row.webhook_id)));
  }

  function track(promise: Promise<void>): void {
    inFlight++;
    settled.add(promise);
    promise.finally(() => {
      inFlight--;
      settled.delete(promise);
      if (running && inFlight <= lowWater) void pump();
    });
  }

  function scheduleNextLook(): void {
    if (!running) return;
    const now = clock().getTime();
    const at = Math.min(now + pollIntervalMs, Math.max(now, nextRetryAt));
    if (timer !== null && timerAt <= at) return;
    if (timer !== null) timers.clearTimeout(timer);
    timerAt = at;
    timer = timers.setTimeout(() => {
      timer = null;
      timerAt = Number.POSITIVE_INFINITY;
      if (nextRetryAt <= clock().getTime()) nextRetryAt = Number.POSITIVE_INFINITY;
      void pump();
    }, at - now);
  }

  async function pump(): Promise<void> {
    if (!running) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        while (running && inFlight <= lowWater) {
          const started = await claimAndStart(concurrency - inFlight);
          if (started.length === 0) break;
          for (const promise of started) track(promise);
        }
      } while (pumpAgain && running && inFlight <= lowWater);
    } catch (error) {
      options.logger?.error({ err: error }, "webhook outbox poll failed");
    } finally {
      pumping = false;
      scheduleNextLook();
    }
  }

  const wake = () => {
    if (running) void pump();
  };

  return {
    async start() {
      if (running) return;
      const now = clock().toISOString();
      const released = await deliveries.releaseInFlight(now);
      if (released > 0) {
        options.logger?.info({ released }, "webhook deliveries left in flight are due again");
      }
      const due = await deliveries.nextDueAt();
      if (due !== undefined) nextRetryAt = Date.parse(due);
      running = true;
      outboxSignal.on("emitted", wake);
      void pump();
    },

    async stop() {
      running = false;
      outboxSignal.off("emitted", wake);
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      timerAt = Number.POSITIVE_INFINITY;
      while (settled.size > 0 || pumping || flushing) {
        await Promise.allSettled([...settled]);
        if (pumping || flushing) await new Promise((resolve) => setImmediate(resolve));
      }
    },

    async runDue() {
      let count = 0;
      for (;;) {
        const started = await claimAndStart(concurrency);
        if (started.length === 0) return count;
        count += started.length;
        await Promise.all(started);
      }
    },

    wake,
  };
}
