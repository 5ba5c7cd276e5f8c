// Row types of the two webhook tables, and the narrowing of any Kysely handle (the store's
// database, a transaction of it, or a test database) to these tables.
import type { Kysely } from "kysely";

export type DeliveryStatus = "pending" | "in_flight" | "delivered" | "failed" | "cancelled";

export type DeactivatedReason = "gone" | "too_many_failures";

export interface WebhookRow {
  id: string;
  org_id: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  /** Sealed (see secrets.ts); null when the webhook signs nothing. */
  secret: string | null;
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
  created_at: string;
  updated_at: string;
}

export interface DeliveryRow {
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
  created_at: string;
  updated_at: string;
}

export interface WebhookTables {
  webhooks: WebhookRow;
  webhook_deliveries: DeliveryRow;
}

/** Any database handle or transaction whose schema includes the webhook tables. */
// biome-ignore lint/suspicious/noExplicitAny: the store's own Database type does not list these tables
export type AnyDb = Kysely<any>;

/** `db` typed for the webhook tables (they exist once migration.ts has run). */
export function webhookTables(db: AnyDb): Kysely<WebhookTables> {
  return db as Kysely<WebhookTables>;
}
