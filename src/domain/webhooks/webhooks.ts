// The webhook use cases behind the /webhooks routes: org-scoped (another org's webhook is 404
// `Webhook not found`), validating (webhook-rules.ts), and writing through the repositories.
import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.js";
import { viewOf } from "../../model/view-shapes.js";
import {
  type DeliveryRecord,
  type WebhookRecord,
  webhookColumnsOf,
  webhookEventsColumn,
  webhookSettingsOf,
} from "../../model/webhook-records.js";
import {
  type DeliveryView,
  DeliveryViewSchema,
  type WebhookView,
  WebhookViewSchema,
} from "../../model/webhook-views.js";
import type { Db } from "../../store/database.js";
import { createDeliveryRepository } from "../../store/webhook-delivery-repository.js";
import {
  createWebhookRepository,
  newWebhookRecord,
  type WebhookPatch,
} from "../../store/webhook-repository.js";
import { decide, recordAttempts, sendAttempt } from "../../webhooks/attempt.js";
import { TEST_EVENT } from "../../webhooks/events.js";
import type { WebhookHttpClient } from "../../webhooks/http-client.js";
import { CLAIM_LEASE_MARGIN_MS, RETRY_COUNT, TIMEOUT_MS } from "../../webhooks/policy.js";
import { maskSecret, type SecretSealer } from "../../webhooks/secrets.js";
import type { UrlPolicy } from "../../webhooks/url-guard.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";
import { eventTimestamps, newDeliveryRecord, queueDeliveries } from "./webhook-events.js";
import { checkInteger, checkSecret, checkWebhookUrl, parseWebhookEvents } from "./webhook-rules.js";

/** What the use cases need; the API builds it from its own dependencies (webhook-service.ts). */
export interface WebhookContext {
  db: Db;
  clock: Clock;
  secrets: SecretSealer;
  /** Used by the test delivery (the dispatcher has its own). */
  http: WebhookHttpClient;
  urlPolicy: UrlPolicy;
}

export interface WebhookInput {
  url: string;
  events: string[];
  secret?: string | null;
  active?: boolean;
  retry_count?: number;
  timeout?: number;
}

export type WebhookUpdate = Partial<WebhookInput>;

export interface TestDeliveryResult {
  success: boolean;
  /** The receiver's HTTP status; null when it did not answer. */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  delivery_id: string;
  /** The body id that was sent. */
  id: string;
}

/** The API view of a stored webhook: its settings, its health, and its secret masked unless asked. */
function webhookView(ctx: WebhookContext, row: WebhookRecord, showSecret = false): WebhookView {
  const secret = row.secret === null ? null : ctx.secrets.open(row.secret);
  return viewOf(WebhookViewSchema, {
    ...row,
    ...webhookSettingsOf(row),
    secret: secret === null ? null : showSecret ? secret : maskSecret(secret),
    consecutive_failed_deliveries: row.failed_deliveries_in_row,
  });
}

/** The API view of a delivery: its event by name and its data as the object it was. */
export function deliveryView(row: DeliveryRecord): DeliveryView {
  return viewOf(DeliveryViewSchema, {
    ...row,
    event: row.event_type,
    data: JSON.parse(row.data) as unknown,
  });
}

async function requireWebhook(
  ctx: WebhookContext,
  orgId: string,
  id: string,
): Promise<WebhookRecord> {
  const row = await createWebhookRepository(ctx.db).findById(orgId, id);
  if (!row) throw new NotFound("Webhook not found");
  return row;
}

/**
 * Runs each field's check and collects every refusal, so one request reports all its problems
 * (an unreachable host no longer hides an invalid event name): one BadRequest, messages joined
 * by "; ". Each check's value is returned when all passed.
 */
class Problems {
  private readonly messages: string[] = [];

  async check<T>(run: () => T | Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof BadRequest)) throw error;
      this.messages.push(error.message);
      return undefined as T; // never used: throwIfAny() throws first
    }
  }

  throwIfAny(): void {
    if (this.messages.length > 0) throw new BadRequest(this.messages.join("; "));
  }
}

/** The org's webhooks, oldest first, secrets masked. */
export async function listWebhooks(ctx: WebhookContext, orgId: string): Promise<WebhookView[]> {
  const rows = await createWebhookRepository(ctx.db).listByOrg(orgId);
  return rows.map((row) => webhookView(ctx, row));
}

/** Creates a webhook; the answer is the only one that shows the secret in full. */
export async function createWebhook(
  ctx: WebhookContext,
  orgId: string,
  input: WebhookInput,
): Promise<WebhookView> {
  if (typeof input.url !== "string" || !Array.isArray(input.events)) {
    throw new BadRequest("url and events are required");
  }
  const problems = new Problems();
  const url = await problems.check(() => checkWebhookUrl(input.url, ctx.urlPolicy));
  const events = await problems.check(() => parseWebhookEvents(input.events));
  const secret = await problems.check(() =>
    input.secret == null ? null : checkSecret(input.secret),
  );
  const retryCount = await problems.check(() =>
    checkInteger("retry_count", input.retry_count ?? RETRY_COUNT.default, RETRY_COUNT),
  );
  const timeoutMs = await problems.check(() =>
    checkInteger("timeout", input.timeout ?? TIMEOUT_MS.default, TIMEOUT_MS),
  );
  problems.throwIfAny();
  const now = ctx.clock().toISOString();
  const row = newWebhookRecord(
    {
      id: randomUUID(),
      org_id: orgId,
      ...webhookColumnsOf({
        url,
        events,
        active: input.active !== false,
        retry_count: retryCount,
        timeout: timeoutMs,
      }),
      secret: secret === null ? null : ctx.secrets.seal(secret),
    },
    now,
  );
  await createWebhookRepository(ctx.db).insert(row);
  return webhookView(ctx, row, true);
}

/** One webhook of the org, secret masked. */
export async function getWebhook(
  ctx: WebhookContext,
  orgId: string,
  id: string,
): Promise<WebhookView> {
  return webhookView(ctx, await requireWebhook(ctx, orgId, id));
}

/**
 * Changes the fields given. `secret: null` removes the secret. Deactivating cancels pending
 * deliveries; reactivating clears `deactivated_reason` and the failed-delivery run.
 */
export async function updateWebhook(
  ctx: WebhookContext,
  orgId: string,
  id: string,
  input: WebhookUpdate,
): Promise<WebhookView> {
  const current = await requireWebhook(ctx, orgId, id);
  const patch: WebhookPatch = {};
  const problems = new Problems();
  const { url, events, secret, retry_count, timeout } = input;
  if (url !== undefined)
    patch.url = await problems.check(() => checkWebhookUrl(url, ctx.urlPolicy));
  if (events !== undefined) {
    patch.events = await problems.check(() => webhookEventsColumn(parseWebhookEvents(events)));
  }
  if (secret !== undefined) {
    patch.secret = await problems.check(() =>
      secret === null ? null : ctx.secrets.seal(checkSecret(secret)),
    );
  }
  if (retry_count !== undefined) {
    patch.retry_count = await problems.check(() =>
      checkInteger("retry_count", retry_count, RETRY_COUNT),
    );
  }
  if (timeout !== undefined) {
    patch.timeout_ms = await problems.check(() => checkInteger("timeout", timeout, TIMEOUT_MS));
  }
  problems.throwIfAny();
  const now = ctx.clock().toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    const webhooks = createWebhookRepository(trx);
    if (input.active === true && current.active !== 1) {
      patch.active = 1;
      patch.deactivated_reason = null;
      await webhooks.update(orgId, id, patch, now);
      await webhooks.resetFailedDeliveries(id);
      return;
    }
    if (input.active === false && current.active === 1) {
      patch.active = 0;
      await createDeliveryRepository(trx).cancelPending(id, now);
    }
    await webhooks.update(orgId, id, patch, now);
  });
  return getWebhook(ctx, orgId, id);
}

/** Deletes the webhook and cancels its pending deliveries (their history stays readable in the store). */
export async function deleteWebhook(ctx: WebhookContext, orgId: string, id: string): Promise<void> {
  await requireWebhook(ctx, orgId, id);
  const now = ctx.clock().toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    await createDeliveryRepository(trx).cancelPending(id, now);
    await createWebhookRepository(trx).delete(orgId, id);
  });
}

/**
 * Sends one signed `webhook.test` delivery now (active or not) and answers the receiver's status
 * and latency. Recorded like any attempt (deliveries list, health fields) but never retried.
 */
export async function testWebhook(
  ctx: WebhookContext,
  orgId: string,
  id: string,
): Promise<TestDeliveryResult> {
  const webhook = await requireWebhook(ctx, orgId, id);
  const now = ctx.clock();
  const data = JSON.stringify({ webhook_id: webhook.id, message: "Test delivery from pbxctl" });
  const micros = (await eventTimestamps(ctx.db, [webhook.id], now)).get(webhook.id)!;
  const row: DeliveryRecord = {
    ...newDeliveryRecord(webhook, { eventId: randomUUID(), type: TEST_EVENT, data, micros }, now),
    status: "in_flight",
    next_attempt_at: null,
    // Claimed by this request while it sends; if the process dies meanwhile, a dispatcher
    // finishes it after the lease, as it would any attempt.
    lease_until: new Date(now.getTime() + webhook.timeout_ms + CLAIM_LEASE_MARGIN_MS).toISOString(),
  };
  await createDeliveryRepository(ctx.db).insertMany([row]);
  const outcome = await sendAttempt(ctx.http, ctx.secrets, webhook, row, now);
  const finishedAt = ctx.clock();
  const decision = decide(webhook, outcome, finishedAt, { retries: false });
  await recordAttempts(ctx.db, [{ webhook, row, outcome, decision }], finishedAt, {
    retries: false,
  });
  return {
    success: outcome.ok,
    status_code: outcome.status,
    latency_ms: outcome.latencyMs,
    error: outcome.error,
    delivery_id: row.id,
    id: outcome.id,
  };
}

export const DELIVERY_LIST_LIMIT = { default: 50, max: 200 } as const;

/** The webhook's most recent deliveries, newest first. */
export async function listDeliveries(
  ctx: WebhookContext,
  orgId: string,
  webhookId: string,
  limit: number = DELIVERY_LIST_LIMIT.default,
): Promise<DeliveryView[]> {
  await requireWebhook(ctx, orgId, webhookId);
  const bounded = checkInteger("limit", limit, { min: 1, max: DELIVERY_LIST_LIMIT.max });
  const rows = await createDeliveryRepository(ctx.db).listByWebhook(orgId, webhookId, bounded);
  return rows.map(deliveryView);
}

/** One page of the webhook's deliveries, newest first, with how many there are in all. */
export async function listDeliveryPage(
  ctx: WebhookContext,
  orgId: string,
  webhookId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: DeliveryView[]; total: number }> {
  await requireWebhook(ctx, orgId, webhookId);
  const repo = createDeliveryRepository(ctx.db);
  const rows = await repo.listByWebhook(orgId, webhookId, page.limit, page.offset);
  return { rows: rows.map(deliveryView), total: await repo.countByWebhook(orgId, webhookId) };
}

/**
 * Queues the event of a finished delivery again, as a new delivery (new `webhook-id`, attempt 1,
 * `replay_of` naming the original), through the outbox.
 */
export async function replayDelivery(
  ctx: WebhookContext,
  orgId: string,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryView> {
  const webhook = await requireWebhook(ctx, orgId, webhookId);
  const original = await createDeliveryRepository(ctx.db).findById(orgId, webhookId, deliveryId);
  if (!original) throw new NotFound("Delivery not found");
  if (original.status === "pending" || original.status === "in_flight") {
    throw new Conflict("Delivery is still being attempted");
  }
  if (webhook.active !== 1) throw new Conflict("Webhook is not active");
  const now = ctx.clock();
  const micros = (await eventTimestamps(ctx.db, [webhook.id], now)).get(webhook.id)!;
  const row = newDeliveryRecord(
    webhook,
    {
      eventId: original.event_id,
      type: original.event_type,
      data: original.data,
      micros,
      replayOf: original.id,
    },
    now,
  );
  await queueDeliveries(ctx.db, [row]);
  return deliveryView(row);
}
