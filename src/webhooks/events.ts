// The webhook event types of SPEC.md §6, in the order the spec lists them. `ivr.*` events
// (caller DTMF) are named by the spec but not implemented: subscribing to one is refused
// (src/domain/webhooks/webhook-rules.ts).
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
  "time_condition.created",
  "time_condition.updated",
  "time_condition.deleted",
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The call lifecycle `POST /test/call-event` simulates, in order. */
export const CALL_LIFECYCLE = [
  "call.initiated",
  "call.ringing",
  "call.answered",
  "call.ended",
] as const satisfies readonly WebhookEvent[];

/** The event of `POST /webhooks/{id}/test`: not one of the event types, so no subscription matches it. */
export const TEST_EVENT = "webhook.test";

/** True when `value` is one of the event types. */
export function isWebhookEvent(value: string): value is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(value);
}
