// The outbox: emitting an event writes one delivery row per matching active webhook of the org,
// in the caller's transaction, so the event is stored exactly when the change that caused it is.
// Nothing is sent here; the dispatcher (dispatcher.ts) delivers the rows.
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { type Clock, systemClock } from "../domain/ports.js";
import { createDeliveryRepository } from "./delivery-repository.js";
import { parseWebhookEvent } from "./events.js";
import type { AnyDb, DeliveryRow, WebhookRow } from "./tables.js";
import { createWebhookRepository } from "./webhook-repository.js";

/**
 * Tells in-process dispatchers that rows were written ("emitted"). A dispatcher that reacts
 * before the writer's transaction commits simply finds nothing and polls again later.
 */
export const outboxSignal = new EventEmitter();
outboxSignal.setMaxListeners(0);

let lastEventMicros = 0;

/**
 * Unix time in microseconds of an event happening at `at`, strictly increasing within this
 * process, so `<webhookId>_<micros>` never repeats even for events in the same millisecond.
 */
export function eventMicros(at: Date): number {
  const candidate = at.getTime() * 1000;
  lastEventMicros = candidate > lastEventMicros ? candidate : lastEventMicros + 1;
  return lastEventMicros;
}

/** A new pending row, due at `now`, for `webhook`. */
export function newDeliveryRow(
  webhook: Pick<WebhookRow, "id" | "org_id">,
  event: { eventId: string; type: string; data: string; micros: number; replayOf?: string },
  now: Date,
): DeliveryRow {
  const at = now.toISOString();
  return {
    id: randomUUID(),
    org_id: webhook.org_id,
    webhook_id: webhook.id,
    event_id: event.eventId,
    message_id: `${webhook.id}_${event.micros}`,
    event_type: event.type,
    data: event.data,
    status: "pending",
    attempt: 0,
    next_attempt_at: at,
    last_attempt_at: null,
    last_status: null,
    last_latency_ms: null,
    last_error: null,
    replay_of: event.replayOf ?? null,
    claim_token: null,
    created_at: at,
    updated_at: at,
  };
}

export interface EmittedEvent {
  event_id: string;
  event: string;
  /** Delivery rows written (one per matching active webhook). */
  deliveries: number;
}

/** Whether `webhook` subscribes to `type` (SPEC.md §6 rule 1: matched in application code). */
export function subscribesTo(webhook: Pick<WebhookRow, "events">, type: string): boolean {
  return (JSON.parse(webhook.events) as string[]).includes(type);
}

/**
 * Writes one pending delivery per active webhook of `orgId` subscribed to `type`, through `trx`
 * when given (the caller's transaction) or `db`. Refuses unknown types and `ivr.*`.
 */
export async function emitEvent(
  db: AnyDb,
  orgId: string,
  type: string,
  data: Record<string, unknown>,
  trx?: AnyDb,
  clock: Clock = systemClock,
): Promise<EmittedEvent> {
  const eventType = parseWebhookEvent(type);
  const handle = trx ?? db;
  const webhooks = (await createWebhookRepository(handle).listActiveByOrg(orgId)).filter((w) =>
    subscribesTo(w, eventType),
  );
  const eventId = randomUUID();
  const now = clock();
  const micros = eventMicros(now);
  const json = JSON.stringify(data);
  const rows = webhooks.map((w) =>
    newDeliveryRow(w, { eventId, type: eventType, data: json, micros }, now),
  );
  await createDeliveryRepository(handle).insertMany(rows);
  if (rows.length > 0) outboxSignal.emit("emitted");
  return { event_id: eventId, event: eventType, deliveries: rows.length };
}
