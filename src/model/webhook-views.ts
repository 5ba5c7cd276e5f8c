// What the API answers for a webhook and for one of its deliveries: the response schemas of
// `/webhooks`, and (as `Static<>`) the view types the webhook use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { DateTime, Nullable, UuidString } from "./view-shapes.js";

/** A webhook as the API shows it, with its delivery health. */
export const WebhookViewSchema = Type.Object(
  {
    id: UuidString,
    url: Type.String(),
    events: Type.Array(Type.String()),
    secret: Nullable(
      Type.String({ description: "masked (`whsec_…abcd`) except in the creation answer" }),
    ),
    active: Type.Boolean(),
    retry_count: Type.Integer(),
    timeout: Type.Integer({ description: "per-attempt timeout, milliseconds" }),
    last_delivery: Nullable(DateTime),
    last_status: Nullable(Type.Integer({ description: "HTTP status of the last attempt" })),
    last_error: Nullable(Type.String()),
    failure_count: Type.Integer({ description: "failed attempts since the last success" }),
    consecutive_failed_deliveries: Type.Integer({
      description: "deliveries that exhausted their retries since the last success",
    }),
    deactivated_reason: Nullable(
      Type.String({ description: "`gone` (receiver answered 410) or `too_many_failures`" }),
    ),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "Webhook" },
);
export type WebhookView = Static<typeof WebhookViewSchema>;

/** One delivery of an event to a webhook, as `/webhooks/{id}/deliveries` lists it. */
export const DeliveryViewSchema = Type.Object(
  {
    id: UuidString,
    webhook_id: UuidString,
    event_id: UuidString,
    message_id: Type.String({ description: "the `webhook-id` header, same on every attempt" }),
    event: Type.String(),
    data: Type.Unknown(),
    status: Type.String({ description: "pending, in_flight, delivered, failed or cancelled" }),
    attempt: Type.Integer({ description: "attempts made so far" }),
    next_attempt_at: Nullable(DateTime),
    last_attempt_at: Nullable(DateTime),
    last_status: Nullable(Type.Integer()),
    last_latency_ms: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    replay_of: Nullable(UuidString),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "WebhookDelivery" },
);
export type DeliveryView = Static<typeof DeliveryViewSchema>;
