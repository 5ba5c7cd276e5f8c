// What the store keeps of a webhook and of each delivery in its outbox, as the delivery pipeline
// works with it (the use cases, `emitEvent`, the dispatcher and the attempt recorder): one
// declaration each. The store's tables are these records (src/store/schema.ts derives them) and
// its webhook and delivery repositories answer them, so no layer above the store names a row.
// How a webhook's settings are stored (events as JSON, `active` as 0/1, the timeout in ms) is
// said once here too, for the API's use cases and `pbxctl apply`/`export` alike.
import type { WebhookView } from "./webhook-views.js";

/** Where a delivery is: waiting, being attempted, or finished one of three ways. */
export type DeliveryStatus = "pending" | "in_flight" | "delivered" | "failed" | "cancelled";

/** Why the dispatcher turned a webhook off: the receiver answered 410, or too many deliveries failed. */
export type DeactivatedReason = "gone" | "too_many_failures";

/** A webhook of an org (migration 0701), with the delivery-health fields the dispatcher keeps. */
export interface WebhookRecord {
  id: string;
  org_id: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  /** Sealed (src/domain/webhooks/webhook-service.ts); null when the webhook signs nothing. */
  secret: string | null;
  /** 0/1. */
  active: number;
  retry_count: number;
  timeout_ms: number;
  last_delivery: string | null;
  last_status: number | null;
  last_error: string | null;
  /** Failed attempts since the last success. */
  failure_count: number;
  /** Deliveries that ended `failed` since the last success. */
  failed_deliveries_in_row: number;
  deactivated_reason: DeactivatedReason | null;
  /** The `<timestamp>` of the webhook's last event (migration 2901): the next one is above it. */
  last_event_micros: number;
  created_at: string;
  updated_at: string;
}

/** One event for one webhook in the outbox (migration 0701), with its last attempt. */
export interface DeliveryRecord {
  id: string;
  org_id: string;
  webhook_id: string;
  event_id: string;
  message_id: string;
  event_type: string;
  /** JSON of the event's `data`. */
  data: string;
  status: DeliveryStatus;
  /** Attempts made so far. */
  attempt: number;
  /** When the next attempt is due (pending rows only). */
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  /** HTTP status of the last attempt; null when it got no answer. */
  last_status: number | null;
  last_latency_ms: number | null;
  last_error: string | null;
  replay_of: string | null;
  claim_token: string | null;
  /** An in-flight attempt's claim ends then; past it the row is due again (migration 2901). */
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

/** What a webhook is set up with, as the API and an org file say it. */
export type WebhookSettings = Pick<
  WebhookView,
  "url" | "events" | "active" | "retry_count" | "timeout"
>;

/** The event types a stored webhook subscribes to. */
export function webhookEvents(record: Pick<WebhookRecord, "events">): string[] {
  return JSON.parse(record.events) as string[];
}

/** The `events` column of these event types (what `webhookEvents` reads back). */
export function webhookEventsColumn(events: readonly string[]): string {
  return JSON.stringify(events);
}

/** A stored webhook's settings as the API and an org file show them. */
export function webhookSettingsOf(record: WebhookRecord): WebhookSettings {
  return {
    url: record.url,
    events: webhookEvents(record),
    active: record.active === 1,
    retry_count: record.retry_count,
    timeout: record.timeout_ms,
  };
}

/** Settings as the store keeps them: events as JSON, `active` as 0/1, the timeout in ms. */
export function webhookColumnsOf(
  settings: WebhookSettings,
): Pick<WebhookRecord, "url" | "events" | "active" | "retry_count" | "timeout_ms"> {
  return {
    url: settings.url,
    events: webhookEventsColumn(settings.events),
    active: settings.active ? 1 : 0,
    retry_count: settings.retry_count,
    timeout_ms: settings.timeout,
  };
}
