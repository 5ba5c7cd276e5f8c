// A ticket's kinds (where it came from, how urgent, where it stands) and what the API answers for
// one (`/tickets`): one definition for the store's columns, the domain's rules, the request and
// response schemas, and (as `Static<>`) the domain's views: a ticket, its history, its alerts, the
// messaging settings and the WhatsApp templates.
import { type Static, Type } from "@sinclair/typebox";
import { DateTime, Nullable, UuidString } from "./view-shapes.js";

export const TICKET_SOURCES = ["missed_call", "queue_timeout", "bot_dropped"] as const;
export const TICKET_PRIORITIES = ["high", "urgent"] as const;
export const TICKET_STATUSES = ["open", "in_progress", "closed"] as const;
export type TicketSource = (typeof TICKET_SOURCES)[number];
export type TicketPriority = (typeof TICKET_PRIORITIES)[number];
export type TicketStatus = (typeof TICKET_STATUSES)[number];
/**
 * A message of the ticket outbox (the ticket-opened message, a workflow POST, an alert): queued
 * with its ticket, sent and retried by src/tickets/messaging.ts.
 */
export interface TicketMessage {
  id: string;
  org_id: string;
  ticket_id: string;
  /** `provider`: a WhatsApp template message; `workflow`: a JSON POST to `target_url`. */
  kind: TicketMessageKind;
  /** The workflow's URL; null for provider messages (the provider's settings name the URL). */
  target_url: string | null;
  body: string;
  status: "pending" | "sent" | "failed";
  attempts: number;
  next_attempt_at: string;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}
export type TicketMessageKind = "provider" | "workflow";

export const ALERT_CHANNELS = ["whatsapp", "webhook"] as const;
export const TEMPLATE_CATEGORIES = ["utility", "marketing", "authentication"] as const;

const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((v) => Type.Literal(v)));

export const TicketViewSchema = Type.Object(
  {
    id: UuidString,
    ticket_id: Type.String({ description: "the ticket id (same as `id`)" }),
    org_id: UuidString,
    source: literals(TICKET_SOURCES),
    priority: literals(TICKET_PRIORITIES),
    status: literals(TICKET_STATUSES),
    phone: Type.String({ description: "the caller's number" }),
    channel_id: Type.String({ description: "the engine channel of the call" }),
    linkedid: Type.String({ description: "the call (see /calls/{linkedId}/journey)" }),
    assignee: Nullable(Type.String()),
    note: Nullable(Type.String()),
    timestamp: DateTime,
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "Ticket" },
);
export type TicketView = Static<typeof TicketViewSchema>;

/** A ticket as the store keeps it: the view without its two echoes (`ticket_id`, `timestamp`). */
export type Ticket = Omit<TicketView, "ticket_id" | "timestamp">;

/** One change of a ticket: who, what, and each field's value before and after. */
export const TicketHistoryViewSchema = Type.Object(
  {
    at: DateTime,
    actor: Type.String({ description: "`intake`, `api_key:<id>`, `user:<id>`, `org_key`..." }),
    action: Type.String({ description: "`created`, `escalated` (repeat caller) or `updated`" }),
    // Unsafe only types it: the schema is the object below, one {from, to} per field.
    changes: Type.Unsafe<Record<string, { from: unknown; to: unknown }>>(
      Type.Object(
        {},
        {
          additionalProperties: Type.Object({ from: Type.Unknown(), to: Type.Unknown() }),
          description: "field -> {from, to}",
        },
      ),
    ),
  },
  { title: "TicketHistoryEntry" },
);
export type TicketHistoryView = Static<typeof TicketHistoryViewSchema>;

/** Who is told of a new or escalated ticket, for which sources and priorities, and how. */
export const TicketAlertViewSchema = Type.Object(
  {
    id: UuidString,
    org_id: UuidString,
    name: Type.String(),
    channel: literals(ALERT_CHANNELS),
    recipient: Type.String(),
    sources: Type.Array(literals(TICKET_SOURCES)),
    priorities: Type.Array(literals(TICKET_PRIORITIES)),
    active: Type.Boolean(),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "TicketAlert" },
);
export type TicketAlertView = Static<typeof TicketAlertViewSchema>;

/** A WhatsApp message template of the admin's. */
export const WhatsappTemplateSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    language: Type.String(),
    category: literals(TEMPLATE_CATEGORIES),
    body_text: Type.String(),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "WhatsappTemplate" },
);
export type WhatsappTemplate = Static<typeof WhatsappTemplateSchema>;

/** The messaging provider's settings: never the access token, only whether one is set. */
export const ProviderSettingsViewSchema = Type.Object(
  {
    base_url: Type.String(),
    phone_number_id: Nullable(Type.String()),
    access_token_set: Type.Boolean({ description: "the token itself is never answered" }),
    updated_at: Nullable(DateTime),
  },
  { title: "MessagingProviderSettings" },
);
export type ProviderSettingsView = Static<typeof ProviderSettingsViewSchema>;

/** An org's ticket messaging config. */
export const MessagingConfigViewSchema = Type.Object(
  {
    org_id: UuidString,
    enabled: Type.Boolean({ description: "send the ticket-opened message to the caller" }),
    template_name: Type.String(),
    language: Type.String(),
    workflow_url: Nullable(Type.String({ description: "the open-status workflow, if any" })),
    updated_at: Nullable(DateTime),
  },
  { title: "TicketMessagingConfig" },
);
export type MessagingConfigView = Static<typeof MessagingConfigViewSchema>;
