// Emitting webhook events into the outbox: one delivery row per matching active webhook of the
// org, in the caller's transaction, so the event is stored exactly when the change that caused it
// is. Nothing is sent here; the dispatcher (src/webhooks/dispatcher.ts) delivers the rows. Also
// the simulated call of `POST /test/call-event`, emitted through the same outbox.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../../clock.js";
import {
  type DeliveryRecord,
  type WebhookRecord,
  webhookEvents,
} from "../../model/webhook-records.js";
import type { Db } from "../../store/database.js";
import { createDeliveryRepository } from "../../store/webhook-delivery-repository.js";
import { createWebhookRepository } from "../../store/webhook-repository.js";
import { CALL_LIFECYCLE, type WebhookEvent } from "../../webhooks/events.js";
import { outboxSignal } from "../../webhooks/outbox-signal.js";
import { BadRequest } from "../errors.js";
import { parseWebhookEvent } from "./webhook-rules.js";

/**
 * Unix time in microseconds of an event happening at `at`: the `<timestamp>` of its
 * `webhook-id` before the store makes it unique per webhook (`nextEventMicros`).
 */
export function eventMicros(at: Date): number {
  return at.getTime() * 1000;
}

/**
 * The `<timestamp>` of a new event for each webhook, unique per webhook in the whole store
 * whichever replica emits (issue 23: a per-process counter gave three servers on one store the
 * same `webhook-id` for different events). Through `db` when it is the caller's transaction.
 */
export function eventTimestamps(
  db: Db,
  webhookIds: readonly string[],
  at: Date,
): Promise<Map<string, number>> {
  return createWebhookRepository(db).nextEventMicros(webhookIds, eventMicros(at));
}

/** A new pending delivery of `event`, due at `now`, for `webhook`. */
export function newDeliveryRecord(
  webhook: Pick<WebhookRecord, "id" | "org_id">,
  event: { eventId: string; type: string; data: string; micros: number; replayOf?: string },
  now: Date,
): DeliveryRecord {
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
    lease_until: null,
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
export function subscribesTo(webhook: Pick<WebhookRecord, "events">, type: string): boolean {
  return webhookEvents(webhook).includes(type);
}

/**
 * Writes one pending delivery per active webhook of `orgId` subscribed to `type`, through `trx`
 * when given (the caller's transaction), else in a transaction of its own: the webhooks'
 * timestamps and the rows commit together, in one commit instead of two (docs/performance.md).
 * Refuses unknown types and `ivr.*`.
 */
export async function emitEvent(
  db: Db,
  orgId: string,
  type: string,
  data: Record<string, unknown>,
  trx?: Db,
  clock: Clock = systemClock,
): Promise<EmittedEvent> {
  const eventType = parseWebhookEvent(type);
  if (trx === undefined) {
    const emitted = await db
      .transaction()
      .execute((own) => emitEvent(own, orgId, eventType, data, own, clock));
    // The signal inside the transaction came before the commit: a dispatcher on another
    // connection (PostgreSQL) found nothing. Now the rows are there to claim.
    if (emitted.deliveries > 0) outboxSignal.emit("emitted");
    return emitted;
  }
  const handle = trx;
  const webhooks = (await createWebhookRepository(handle).listActiveByOrg(orgId)).filter((w) =>
    subscribesTo(w, eventType),
  );
  const eventId = randomUUID();
  const now = clock();
  const micros = await eventTimestamps(
    handle,
    webhooks.map((w) => w.id),
    now,
  );
  const json = JSON.stringify(data);
  // A webhook deleted since it was listed got no timestamp and gets no delivery.
  const rows = webhooks
    .filter((w) => micros.has(w.id))
    .map((w) =>
      newDeliveryRecord(
        w,
        { eventId, type: eventType, data: json, micros: micros.get(w.id)! },
        now,
      ),
    );
  await queueDeliveries(handle, rows);
  return { event_id: eventId, event: eventType, deliveries: rows.length };
}

/** Writes pending delivery rows and wakes the dispatchers of this process. */
export async function queueDeliveries(db: Db, rows: readonly DeliveryRecord[]): Promise<void> {
  await createDeliveryRepository(db).insertMany(rows);
  if (rows.length > 0) outboxSignal.emit("emitted");
}

export const SIMULATED_CALL_EVENTS = [...CALL_LIFECYCLE, "call.failed"] as const;

export interface SimulatedCall {
  /** One of the call.* events; the whole lifecycle when omitted. */
  event?: string;
  call_id?: string;
  from?: string;
  to?: string;
}

export interface SimulatedCallResult {
  call_id: string;
  events: EmittedEvent[];
}

/** The event's `data` in the shape real engine events have (event-data.ts), marked simulated. */
function eventData(type: WebhookEvent, call: Required<Omit<SimulatedCall, "event">>, at: string) {
  const base = {
    call_id: call.call_id,
    uniqueid: call.call_id,
    channel: "",
    from: call.from,
    to: call.to,
    at,
    simulated: true,
  };
  switch (type) {
    case "call.ended":
      return { ...base, answered: true, hangup_cause: 16, hangup_cause_text: "Normal Clearing" };
    case "call.failed":
      return { ...base, answered: false, hangup_cause: 17, hangup_cause_text: "User busy" };
    default:
      return base;
  }
}

/** Emits the call lifecycle (or the one named call event) for `orgId`, in one transaction. */
export async function simulateCallEvent(
  ctx: { db: Db; clock: Clock },
  orgId: string,
  body: SimulatedCall,
): Promise<SimulatedCallResult> {
  let types: readonly WebhookEvent[] = CALL_LIFECYCLE;
  if (body.event !== undefined) {
    const type = parseWebhookEvent(body.event);
    if (!(SIMULATED_CALL_EVENTS as readonly string[]).includes(type)) {
      throw new BadRequest(`event must be one of: ${SIMULATED_CALL_EVENTS.join(", ")}`);
    }
    types = [type];
  }
  const call = {
    call_id: body.call_id ?? `sim-${randomUUID()}`,
    from: body.from ?? "+15550100",
    to: body.to ?? "100",
  };
  const at = ctx.clock().toISOString();
  const events = await ctx.db.transaction().execute(async (trx) => {
    const emitted: EmittedEvent[] = [];
    for (const type of types) {
      emitted.push(await emitEvent(ctx.db, orgId, type, eventData(type, call, at), trx, ctx.clock));
    }
    return emitted;
  });
  return { call_id: call.call_id, events };
}
