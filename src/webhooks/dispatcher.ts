// The dispatcher: claims due outbox rows with bounded concurrency and delivers them, in the
// server process, started and stopped with it; every replica runs one over the shared store.
// Clock, timers and HTTP client are injected so tests drive time instead of sleeping.
// At-least-once: each claim is a lease, and a row whose lease ran out (its replica died
// mid-attempt) is claimed again by any dispatcher, with the same `webhook-id` (a receiver may see
// such an attempt twice; its body id tells it).
//
// Throughput comes from doing little per delivery in the store: rows are claimed in batches,
// their webhooks read with one query per batch, and finished attempts are recorded in group
// commits (every attempt that finishes while a commit runs goes into the next one). A slot is
// freed only once its attempt is recorded, so a crash never loses more than what is in flight.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock, systemTimers, type TimerHandle, type Timers } from "../clock.js";
import { noInstruments, type WebhookInstruments } from "../metrics/instruments.js";
import type { DeliveryRecord, WebhookRecord } from "../model/webhook-records.js";
import type { Db } from "../store/database.js";
import { createDeliveryRepository } from "../store/webhook-delivery-repository.js";
import { createWebhookRepository } from "../store/webhook-repository.js";
import {
  attemptResult,
  type Deactivation,
  decide,
  type FinishedAttempt,
  type RecordOptions,
  recordAttempts,
  sendAttempt,
} from "./attempt.js";
import type { WebhookHttpClient } from "./http-client.js";
import { outboxSignal } from "./outbox-signal.js";
import { CLAIM_LEASE_MARGIN_MS, DEACTIVATE_AFTER_FAILED_DELIVERIES } from "./policy.js";
import { plainSecrets, type SecretSealer } from "./secrets.js";

export interface DispatcherLogger {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface DispatcherOptions {
  /** The database itself (not a transaction): attempts are recorded in their own transactions. */
  db: Db;
  http: WebhookHttpClient;
  secrets?: SecretSealer;
  /** Wall time: due dates of rows. */
  clock?: Clock;
  /** The waits between looks at the outbox (only `setTimer` is used). */
  timers?: Timers;
  /** Attempts in flight at once (default 16). */
  concurrency?: number;
  /** Longest wait between two looks at the outbox when idle (default 1000 ms). */
  pollIntervalMs?: number;
  /** Consecutive failed deliveries that deactivate a webhook (default 50). */
  deactivateAfter?: number;
  /** A claim lasts the webhook's timeout plus this (default CLAIM_LEASE_MARGIN_MS). */
  leaseMarginMs?: number;
  logger?: DispatcherLogger;
  /** Attempts by result, delivery latency, endpoints deactivated (src/metrics). */
  instruments?: WebhookInstruments;
}

export interface WebhookDispatcher {
  /** Delivers until stopped (rows a dead replica left in flight once their lease runs out). */
  start(): Promise<void>;
  /** Claims nothing more and waits for the attempts in flight. */
  stop(): Promise<void>;
  /** Delivers every row due now, and rows that become due meanwhile; resolves with the count. */
  runDue(): Promise<number>;
  /** Looks at the outbox now (called on every emit in this process). */
  wake(): void;
}

/**
 * Group commit of finished attempts: every attempt that finishes in the same turn of the event
 * loop, or while a commit runs, goes into one commit. The commit starts on the next turn
 * (setImmediate), after every answer that arrived in this one: SQLite's calls are synchronous, so
 * a commit started at once holds the loop until it is done and no other answer can join it (a
 * bench:webhooks run committed 2,992 times for 3,000 deliveries). `add` resolves once the
 * attempt is recorded (or its commit failed and was logged).
 */
class AttemptRecorder {
  private readonly waiting: { attempt: FinishedAttempt; done: () => void }[] = [];
  /** A commit is running; attempts that finish now wait for the next one. */
  private committing = false;
  /** A drain is due on the next turn of the event loop. */
  private scheduled = false;

  constructor(
    private readonly commit: (attempts: FinishedAttempt[]) => Promise<void>,
    private readonly onFailure: (error: unknown, count: number) => void,
  ) {}

  get busy(): boolean {
    return this.committing || this.scheduled;
  }

  add(attempt: FinishedAttempt): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push({ attempt, done: resolve });
      if (this.scheduled || this.committing) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.drain();
      });
    });
  }

  private async drain(): Promise<void> {
    if (this.committing) return;
    this.committing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0);
        try {
          await this.commit(batch.map((b) => b.attempt));
        } catch (error) {
          // A store failure: these rows stay in flight and are retried after the next restart.
          this.onFailure(error, batch.length);
        }
        for (const { done } of batch) done();
      }
    } finally {
      this.committing = false;
    }
  }
}

/** The outbox dispatcher; build it with `createDispatcher`. */
class OutboxDispatcher implements WebhookDispatcher {
  private readonly db: Db;
  private readonly http: WebhookHttpClient;
  private readonly secrets: SecretSealer;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly concurrency: number;
  /** Claim again only when this many or fewer are in flight, so claims come in batches. */
  private readonly lowWater: number;
  private readonly pollIntervalMs: number;
  private readonly leaseMarginMs: number;
  private readonly recordOptions: RecordOptions;
  private readonly logger: DispatcherLogger | undefined;
  private readonly instruments: WebhookInstruments;
  private readonly deliveries: ReturnType<typeof createDeliveryRepository>;
  private readonly webhooks: ReturnType<typeof createWebhookRepository>;
  private readonly recorder: AttemptRecorder;

  /** Between start() and stop(). */
  private running = false;
  /** Attempts started and not yet recorded. */
  private readonly inFlight = new Set<Promise<void>>();
  /** A claim loop is running. */
  private claiming = false;
  /** Something asked for a claim loop while one ran: it loops once more. */
  private claimAgain = false;
  /** The timer of the next look at the outbox, and when it fires (ms of the wall clock). */
  private nextLook: { handle: TimerHandle; at: number } | null = null;
  /** Earliest retry this dispatcher scheduled (rows written by others are found by polling). */
  private nextRetryAt = Number.POSITIVE_INFINITY;
  /** `wake` bound once, so stop() can unsubscribe it. */
  readonly wake = (): void => {
    if (this.running) void this.pump();
  };

  constructor(options: DispatcherOptions) {
    this.db = options.db;
    this.http = options.http;
    this.secrets = options.secrets ?? plainSecrets;
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.concurrency = Math.max(1, options.concurrency ?? 16);
    this.lowWater = Math.floor(this.concurrency / 2);
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.leaseMarginMs = options.leaseMarginMs ?? CLAIM_LEASE_MARGIN_MS;
    this.recordOptions = {
      retries: true,
      deactivateAfter: options.deactivateAfter ?? DEACTIVATE_AFTER_FAILED_DELIVERIES,
    };
    this.logger = options.logger;
    this.instruments = options.instruments ?? noInstruments.webhooks;
    this.deliveries = createDeliveryRepository(this.db);
    this.webhooks = createWebhookRepository(this.db);
    this.recorder = new AttemptRecorder(
      (attempts) => this.commit(attempts),
      (error, count) => this.logger?.error({ err: error, count }, "recording attempts failed"),
    );
  }

  async start(): Promise<void> {
    if (this.running) return;
    const due = await this.deliveries.nextDueAt();
    if (due !== undefined) this.nextRetryAt = Date.parse(due);
    this.running = true;
    outboxSignal.on("emitted", this.wake);
    void this.pump();
  }

  async stop(): Promise<void> {
    this.running = false;
    outboxSignal.off("emitted", this.wake);
    this.cancelNextLook();
    while (this.inFlight.size > 0 || this.claiming || this.recorder.busy) {
      await Promise.allSettled([...this.inFlight]);
      if (this.claiming || this.recorder.busy) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  async runDue(): Promise<number> {
    let count = 0;
    for (;;) {
      const started = await this.claimAndStart(this.concurrency);
      if (started.length === 0) return count;
      count += started.length;
      await Promise.all(started);
    }
  }

  /** Records a batch of attempts, logs deactivations and notes the earliest retry. */
  private async commit(attempts: FinishedAttempt[]): Promise<void> {
    const deactivations: Deactivation[] = await recordAttempts(
      this.db,
      attempts,
      this.clock(),
      this.recordOptions,
    );
    for (const d of deactivations) {
      this.instruments.endpointDisabled(d.reason);
      this.logger?.info({ webhook_id: d.webhookId, reason: d.reason }, "webhook deactivated");
    }
    for (const attempt of attempts) {
      if (attempt.decision.nextAttemptAt !== null) {
        this.nextRetryAt = Math.min(this.nextRetryAt, Date.parse(attempt.decision.nextAttemptAt));
      }
    }
  }

  private async deliver(row: DeliveryRecord, webhook: WebhookRecord | undefined): Promise<void> {
    try {
      if (webhook?.active !== 1) {
        await this.deliveries.setStatus(row.id, "cancelled", this.clock().toISOString());
        return;
      }
      const outcome = await sendAttempt(this.http, this.secrets, webhook, row, this.clock());
      const finishedAt = this.clock();
      const decision = decide(webhook, outcome, finishedAt, this.recordOptions);
      this.instruments.attempt(
        attemptResult(outcome),
        outcome.ok ? (finishedAt.getTime() - Date.parse(row.created_at)) / 1000 : null,
      );
      await this.recorder.add({ webhook, row, outcome, decision });
    } catch (error) {
      this.logger?.error({ err: error, delivery_id: row.id }, "webhook delivery failed");
    }
  }

  /** Claims up to `limit` due rows and starts them; resolves with their completion promises. */
  private async claimAndStart(limit: number): Promise<Promise<void>[]> {
    const rows = await this.deliveries.claimDue(
      this.clock().toISOString(),
      limit,
      randomUUID(),
      this.leaseMarginMs,
    );
    if (rows.length === 0) return [];
    const hooks = await this.webhooks.findManyByIds([...new Set(rows.map((r) => r.webhook_id))]);
    return rows.map((row) => this.deliver(row, hooks.get(row.webhook_id)));
  }

  private track(attempt: Promise<void>): void {
    this.inFlight.add(attempt);
    attempt.finally(() => {
      this.inFlight.delete(attempt);
      if (this.running && this.inFlight.size <= this.lowWater) void this.pump();
    });
  }

  private cancelNextLook(): void {
    this.nextLook?.handle.cancel();
    this.nextLook = null;
  }

  /** Looks again at the next retry this dispatcher knows of, or after the poll interval. */
  private scheduleNextLook(): void {
    if (!this.running) return;
    const now = this.clock().getTime();
    const at = Math.min(now + this.pollIntervalMs, Math.max(now, this.nextRetryAt));
    if (this.nextLook !== null && this.nextLook.at <= at) return;
    this.cancelNextLook();
    const handle = this.timers.setTimer(
      at - now,
      () => {
        this.nextLook = null;
        if (this.nextRetryAt <= this.clock().getTime()) {
          this.nextRetryAt = Number.POSITIVE_INFINITY;
        }
        void this.pump();
      },
      { background: true },
    );
    this.nextLook = { handle, at };
  }

  /** Claims while there is room, then schedules the next look. One loop at a time. */
  private async pump(): Promise<void> {
    if (!this.running) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = true;
    try {
      do {
        this.claimAgain = false;
        while (this.running && this.inFlight.size <= this.lowWater) {
          const started = await this.claimAndStart(this.concurrency - this.inFlight.size);
          if (started.length === 0) break;
          for (const attempt of started) this.track(attempt);
        }
      } while (this.claimAgain && this.running && this.inFlight.size <= this.lowWater);
    } catch (error) {
      this.logger?.error({ err: error }, "webhook outbox poll failed");
    } finally {
      this.claiming = false;
      this.scheduleNextLook();
    }
  }
}

/** A dispatcher over `options.db`; nothing runs until `start()` or `runDue()`. */
export function createDispatcher(options: DispatcherOptions): WebhookDispatcher {
  return new OutboxDispatcher(options);
}
