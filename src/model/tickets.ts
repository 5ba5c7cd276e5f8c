// A ticket's kinds (where it came from, how urgent, where it stands) and what the API answers for
// one (`/tickets`): one definition for the store's columns, the domain's rules, the request and
// response schemas, and (as `Static<>`) the domain's TicketView.
import { type Static, Type } from "@sinclair/typebox";
import { DateTime, Nullable, UuidString } from "./view-shapes.js";

export const TICKET_SOURCES = ["missed_call", "queue_timeout", "bot_dropped"] as const;
export const TICKET_PRIORITIES = ["high", "urgent"] as const;
export const TICKET_STATUSES = ["open", "in_progress", "closed"] as const;
export type TicketSource = (typeof TICKET_SOURCES)[number];
export type TicketPriority = (typeof TICKET_PRIORITIES)[number];
export type TicketStatus = (typeof TICKET_STATUSES)[number];

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
