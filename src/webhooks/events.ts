// The webhook event types of SPEC.md §6, in the order the spec lists them. `ivr.*` events
// (caller DTMF) are named by the spec but not implemented: subscribing to one is refused.
import { BadRequest } from "../domain/errors.js";

export const WEBHOOK_EVENTS = [
  "call.initiated",
  "call.ringing",
  "call.answered",
  "call.ended",
  "call.failed",
  "queue.entered",
  "queue.abandoned",
  "queue.answered",
  "user.registered",
  "user.unregistered",
  "trunk.registered",
  "trunk.failed",
  "crm.lead.created",
  "crm.lead.updated",
  "crm.lead.status_changed",
  "crm.client.created",
  "crm.client.updated",
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The call lifecycle `POST /test/call-event` simulates, in order. */
export const CALL_LIFECYCLE = [
  "call.initiated",
  "call.ringing",
  "call.answered",
  "call.ended",
] as const satisfies readonly WebhookEvent[];

/** The event of `POST /webhooks/{id}/test`: not one of the 17, so no subscription matches it. */
export const TEST_EVENT = "webhook.test";

/** True when `value` is one of the 17 event types. */
export function isWebhookEvent(value: string): value is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

/** `value` as an event type, or a BadRequest saying why it is not one. */
export function parseWebhookEvent(value: string): WebhookEvent {
  if (isWebhookEvent(value)) return value;
  if (value.startsWith("ivr.")) throw new BadRequest("ivr.* events are not implemented");
  throw new BadRequest(`Unknown event type: ${value} (allowed: ${WEBHOOK_EVENTS.join(", ")})`);
}

/** A non-empty, duplicate-free list of event types, in the order given. */
export function parseWebhookEvents(values: readonly string[]): WebhookEvent[] {
  if (values.length === 0) throw new BadRequest("events must list at least one event type");
  const events: WebhookEvent[] = [];
  const problems: string[] = [];
  for (const value of values) {
    try {
      events.push(parseWebhookEvent(value));
    } catch (error) {
      if (!(error instanceof BadRequest)) throw error;
      if (!problems.includes(error.message)) problems.push(error.message);
    }
  }
  // Every bad name at once, not the first of them.
  if (problems.length > 0) throw new BadRequest(problems.join("; "));
  return [...new Set(events)];
}
