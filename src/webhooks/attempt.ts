// One delivery attempt: build the signed request, POST it, and record what happened on the
// delivery row and on the webhook's health fields (in one transaction).
import { performance } from "node:perf_hooks";
import { type AttemptResult, attemptResultOf } from "../metrics/instruments.js";
import type {
  DeactivatedReason,
  DeliveryRecord,
  DeliveryStatus,
  WebhookRecord,
} from "../model/webhook-records.js";
import type { Db } from "../store/database.js";
import { createDeliveryRepository } from "../store/webhook-delivery-repository.js";
import { createWebhookRepository } from "../store/webhook-repository.js";
import type { WebhookHttpClient } from "./http-client.js";
import { DEACTIVATE_AFTER_FAILED_DELIVERIES, ERROR_TEXT_MAX } from "./policy.js";
import { nextRetryDelayMs } from "./retry.js";
import type { SecretSealer } from "./secrets.js";
import { PRIVATE_TARGET_MESSAGE } from "./url-guard.js";
import { buildWireRequest } from "./wire.js";

export interface AttemptOutcome {
  /** The body's `id` (`<messageId>_<attempt>`). */
  id: string;
  attempt: number;
  ok: boolean;
  /** HTTP status, or null when no answer came (network error, timeout). */
  status: number | null;
  latencyMs: number;
  error: string | null;
  retryAfter: string | null;
  sentAt: Date;
}

/** The result class of an attempt: the answer's status class, or why there was none. */
export function attemptResult(outcome: AttemptOutcome): AttemptResult {
  if (outcome.status !== null) return attemptResultOf(outcome.status);
  if (outcome.error?.includes(PRIVATE_TARGET_MESSAGE)) return "refused";
  if (outcome.error !== null && /timed out/i.test(outcome.error)) return "timeout";
  return "error";
}

function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown })?.code;
  const text =
    typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
  return text.slice(0, ERROR_TEXT_MAX);
}

/** Sends attempt `row.attempt + 1` of `row` to `webhook`; never throws. */
export async function sendAttempt(
  http: WebhookHttpClient,
  secrets: SecretSealer,
  webhook: WebhookRecord,
  row: DeliveryRecord,
  sentAt: Date,
): Promise<AttemptOutcome> {
  const attempt = row.attempt + 1;
  const request = buildWireRequest({
    messageId: row.message_id,
    attempt,
    eventType: row.event_type,
    orgId: row.org_id,
    data: row.data,
    sentAt,
    secret: webhook.secret === null ? null : secrets.open(webhook.secret),
  });
  const started = performance.now();
  try {
    const answer = await http.post(webhook.url, request.body, request.headers, webhook.timeout_ms);
    const ok = answer.status >= 200 && answer.status < 300;
    return {
      id: request.id,
      attempt,
      ok,
      status: answer.status,
      latencyMs: Math.round(performance.now() - started),
      error: ok
        ? null
        : `HTTP ${answer.status}${answer.bodySnippet ? `: ${answer.bodySnippet}` : ""}`.slice(
            0,
            ERROR_TEXT_MAX,
          ),
      retryAfter: answer.retryAfter,
      sentAt,
    };
  } catch (error) {
    return {
      id: request.id,
      attempt,
      ok: false,
      status: null,
      latencyMs: Math.round(performance.now() - started),
      error: describeFailure(error),
      retryAfter: null,
      sentAt,
    };
  }
}

export interface RecordOptions {
  /** False for the one-shot test delivery: no retry, no deactivation. */
  retries: boolean;
  /** Consecutive failed deliveries that deactivate the webhook. */
  deactivateAfter?: number;
}

/** What happens to a delivery after an attempt. */
export interface Decision {
  status: DeliveryStatus;
  nextAttemptAt: string | null;
  /** The receiver answered 410 Gone (and this delivery may deactivate the webhook). */
  gone: boolean;
}

/** Delivered, retried later (when), or failed for good, for one attempt's outcome. */
export function decide(
  webhook: WebhookRecord,
  outcome: AttemptOutcome,
  finishedAt: Date,
  options: RecordOptions,
): Decision {
  if (outcome.ok) return { status: "delivered", nextAttemptAt: null, gone: false };
  const gone = options.retries && outcome.status === 410;
  const delay =
    options.retries && !gone
      ? nextRetryDelayMs(outcome.attempt, webhook.retry_count, outcome, finishedAt)
      : null;
  if (delay === null) return { status: "failed", nextAttemptAt: null, gone };
  return {
    status: "pending",
    nextAttemptAt: new Date(finishedAt.getTime() + delay).toISOString(),
    gone: false,
  };
}

export interface FinishedAttempt {
  webhook: WebhookRecord;
  row: DeliveryRecord;
  outcome: AttemptOutcome;
  decision: Decision;
}

export type Deactivation = { webhookId: string; reason: DeactivatedReason };

/**
 * Stores a batch of finished attempts in one transaction: each delivery row, then one health
 * update per webhook (the batch's attempts in order), then any deactivation: 410 Gone, or a run
 * of failed deliveries reaching `deactivateAfter`. Returns the deactivations.
 */
export async function recordAttempts(
  db: Db,
  attempts: readonly FinishedAttempt[],
  finishedAt: Date,
  options: RecordOptions,
): Promise<Deactivation[]> {
  const at = finishedAt.toISOString();
  const threshold = options.deactivateAfter ?? DEACTIVATE_AFTER_FAILED_DELIVERIES;
  const byWebhook = new Map<string, FinishedAttempt[]>();
  for (const attempt of attempts) {
    const list = byWebhook.get(attempt.webhook.id) ?? [];
    list.push(attempt);
    byWebhook.set(attempt.webhook.id, list);
  }
  const deactivations: Deactivation[] = [];
  await db.transaction().execute(async (trx) => {
    const deliveries = createDeliveryRepository(trx);
    const webhooks = createWebhookRepository(trx);
    for (const { row, outcome, decision } of attempts) {
      await deliveries.recordAttempt(
        row.id,
        {
          status: decision.status,
          attempt: outcome.attempt,
          next_attempt_at: decision.nextAttemptAt,
          last_attempt_at: outcome.sentAt.toISOString(),
          last_status: outcome.status,
          last_latency_ms: outcome.latencyMs,
          last_error: outcome.error,
        },
        at,
        row.claim_token,
      );
    }
    for (const [webhookId, list] of byWebhook) {
      const lastSuccess = list.findLastIndex((a) => a.outcome.ok);
      const after = list.slice(lastSuccess + 1);
      const failedDeliveries = options.retries
        ? after.filter((a) => a.decision.status === "failed").length
        : 0;
      const last = list[list.length - 1]!.outcome;
      await webhooks.recordAttempts(webhookId, {
        at: last.sentAt.toISOString(),
        status: last.status,
        error: last.error,
        resetRuns: lastSuccess >= 0,
        failedAttempts: after.length,
        failedDeliveries,
      });
      let reason: DeactivatedReason | null = list.some((a) => a.decision.gone) ? "gone" : null;
      if (reason === null && failedDeliveries > 0) {
        const run = await webhooks.failedDeliveriesInRow(webhookId);
        if (run >= threshold) reason = "too_many_failures";
      }
      if (reason !== null) {
        await webhooks.deactivate(webhookId, reason, at);
        await deliveries.cancelPending(webhookId, at);
        deactivations.push({ webhookId, reason });
      }
    }
  });
  return deactivations;
}
