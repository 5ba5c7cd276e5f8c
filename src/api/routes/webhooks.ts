// Webhooks (`/webhooks`, SPEC.md §4.6) and the simulated call of `POST /test/call-event`. Thin:
// the rules live in src/domain/webhooks/webhooks.ts.
import { Type } from "@sinclair/typebox";
import { SIMULATED_CALL_EVENTS, simulateCallEvent } from "../../domain/webhooks/webhook-events.js";
import { webhookContext } from "../../domain/webhooks/webhook-service.js";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveryPage,
  listWebhooks,
  replayDelivery,
  testWebhook,
  updateWebhook,
} from "../../domain/webhooks/webhooks.js";
import {
  deliveryBodySchema,
  ENGINE_EVENT_DATA,
  type EngineEvent,
} from "../../webhooks/event-data.js";
import { WEBHOOK_EVENTS } from "../../webhooks/events.js";
import { RETRY_COUNT, SECRET_LENGTH, TIMEOUT_MS } from "../../webhooks/policy.js";
import type { AppDeps } from "../deps.js";
import { DEFAULT_PAGE_SIZE, PageOf, PageQuery } from "../pagination.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, Nullable, UuidString } from "../schemas.js";

const context = (deps: AppDeps) =>
  webhookContext({
    db: deps.db,
    clock: deps.clock,
    serverKey: deps.config.serverKey,
    allowPrivate: deps.config.webhookAllowPrivate,
  });

// A plain string (not an enum) so that `ivr.*` gets its own message from the use case.
const EventType = Type.String({
  maxLength: 64,
  description: `One of: ${WEBHOOK_EVENTS.join(", ")}. \`ivr.*\` events are not implemented.`,
});

const DateTime = Type.String({ format: "date-time" });

const Webhook = Type.Object(
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

const Delivery = Type.Object(
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

const Secret = Type.String({
  minLength: SECRET_LENGTH.min,
  maxLength: SECRET_LENGTH.max,
  description:
    "HMAC signing secret, write-only. A `whsec_<base64>` secret works as is with the Standard Webhooks libraries.",
});

const webhookFields = {
  url: Type.String({ minLength: 1, maxLength: 2048, description: "http(s) target of the POST" }),
  events: Type.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENTS.length }),
  secret: Type.Optional(Nullable(Secret)),
  active: Type.Optional(Type.Boolean({ default: true })),
  retry_count: Type.Optional(
    Type.Integer({
      minimum: RETRY_COUNT.min,
      maximum: RETRY_COUNT.max,
      description: `retries after a failed attempt (default ${RETRY_COUNT.default})`,
    }),
  ),
  timeout: Type.Optional(
    Type.Integer({
      minimum: TIMEOUT_MS.min,
      maximum: TIMEOUT_MS.max,
      description: `per-attempt timeout in ms (default ${TIMEOUT_MS.default})`,
    }),
  ),
};

// Every engine event a webhook can receive, documented as a callback of `POST /webhooks`.
const engineEventCallbacks = Object.fromEntries(
  (Object.keys(ENGINE_EVENT_DATA) as EngineEvent[]).map((event) => [
    event,
    {
      summary: `The \`${event}\` delivery`,
      description: `${ENGINE_EVENT_DATA[event].description ?? `What \`${event}\` sends.`} Signed with the webhook's secret (X-PBX-Signature, webhook-signature); see docs/webhooks.md.`,
      body: deliveryBodySchema(event),
    },
  ]),
);

const DeliveryParams = Type.Object({ id: UuidString, deliveryId: UuidString });

export const webhookRoutes = [
  defineRoute({
    method: "get",
    path: "/webhooks",
    tag: "Webhooks",
    summary: "List the org's webhooks (secrets masked)",
    auth: "org",
    permission: "org.manage",
    list: "envelope",
    responses: { 200: { description: "Webhooks, oldest first", schema: Type.Array(Webhook) } },
    handler: ({ deps, principal }) => listWebhooks(context(deps), orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/webhooks",
    tag: "Webhooks",
    summary: "Create a webhook; `url` and `events[]` are required",
    description:
      "Targets on loopback, link-local and private addresses are refused unless the server runs with PBX_WEBHOOK_ALLOW_PRIVATE=1.",
    auth: "org",
    permission: "org.manage",
    body: Type.Object(webhookFields, { additionalProperties: false }),
    responses: { 201: { description: "The webhook (secret in full, this once)", schema: Webhook } },
    callbacks: engineEventCallbacks,
    handler: ({ deps, body, principal }) =>
      createWebhook(context(deps), orgCaller(principal).orgId, body),
  }),

  defineRoute({
    method: "get",
    path: "/webhooks/{id}",
    tag: "Webhooks",
    summary: "One webhook with its delivery health",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: { 200: { description: "The webhook", schema: Webhook } },
    handler: ({ deps, params, principal }) =>
      getWebhook(context(deps), orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "put",
    path: "/webhooks/{id}",
    tag: "Webhooks",
    summary: "Change a webhook (only the fields sent)",
    description:
      "`secret: null` removes the secret. `active: false` cancels pending deliveries; `active: true` clears `deactivated_reason`.",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: Type.Partial(Type.Object(webhookFields), { additionalProperties: false }),
    responses: { 200: { description: "The webhook", schema: Webhook } },
    handler: ({ deps, params, body, principal }) =>
      updateWebhook(context(deps), orgCaller(principal).orgId, params.id, body),
  }),

  defineRoute({
    method: "delete",
    path: "/webhooks/{id}",
    tag: "Webhooks",
    summary: "Delete a webhook; its pending deliveries are cancelled",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, params, principal }) => {
      await deleteWebhook(context(deps), orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),

  defineRoute({
    method: "post",
    path: "/webhooks/{id}/test",
    tag: "Webhooks",
    summary: "Send one signed `webhook.test` delivery now and report the receiver's answer",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: {
      200: {
        description: "The attempt's result (the request succeeds whatever the receiver answered)",
        schema: Type.Object({
          success: Type.Boolean(),
          status_code: Nullable(Type.Integer()),
          latency_ms: Type.Integer(),
          error: Nullable(Type.String()),
          delivery_id: UuidString,
          id: Type.String({ description: "the body id sent" }),
        }),
      },
    },
    handler: ({ deps, params, principal }) =>
      testWebhook(context(deps), orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "get",
    path: "/webhooks/{id}/deliveries",
    tag: "Webhooks",
    summary: "Recent deliveries of a webhook, newest first, with status, latency and error",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    query: PageQuery,
    list: "envelope",
    responses: { 200: { description: "Deliveries", schema: Type.Array(Delivery) } },
    // The outbox grows without bound: this list pages in the database, not in memory.
    handler: async ({ deps, params, query, principal }) => {
      const page = await listDeliveryPage(context(deps), orgCaller(principal).orgId, params.id, {
        limit: query.limit ?? DEFAULT_PAGE_SIZE,
        offset: query.offset ?? 0,
      });
      return new PageOf(page.rows, page.total);
    },
  }),

  defineRoute({
    method: "post",
    path: "/webhooks/{id}/deliveries/{deliveryId}/replay",
    tag: "Webhooks",
    summary: "Send a finished delivery's event again (as a new delivery)",
    auth: "org",
    permission: "org.manage",
    params: DeliveryParams,
    responses: {
      202: { description: "The new, pending delivery", schema: Delivery },
      409: { description: "The delivery is not finished yet" },
    },
    handler: ({ deps, params, principal }) =>
      replayDelivery(context(deps), orgCaller(principal).orgId, params.id, params.deliveryId),
  }),

  defineRoute({
    method: "post",
    path: "/test/call-event",
    tag: "Webhooks",
    summary: "Simulate a call: the lifecycle or one named call event, through the webhook outbox",
    auth: "org",
    permission: "org.manage",
    body: Type.Object(
      {
        event: Type.Optional(
          Type.String({
            description: `one of ${SIMULATED_CALL_EVENTS.join(", ")}; the whole lifecycle (initiated, ringing, answered, ended) when omitted`,
          }),
        ),
        call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        from: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
        to: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
      },
      { additionalProperties: false },
    ),
    responses: {
      202: {
        description: "Events queued for delivery",
        schema: Type.Object({
          call_id: Type.String(),
          events: Type.Array(
            Type.Object({
              event_id: UuidString,
              event: Type.String(),
              deliveries: Type.Integer({ description: "matching active webhooks" }),
            }),
          ),
        }),
      },
    },
    handler: ({ deps, body, principal }) =>
      simulateCallEvent(context(deps), orgCaller(principal).orgId, body),
  }),
];
