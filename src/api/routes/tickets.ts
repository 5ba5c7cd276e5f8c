// Auto-created tickets (`/tickets`, SPEC.md §2 "Ticket", §4.7) and the internal settings of the
// ticket messages (provider key, per-org messaging config; `X-Internal-Key` only). Thin: the
// rules live in src/domain/tickets/tickets.ts and src/domain/tickets/ticket-messaging.ts.
import { Type } from "@sinclair/typebox";
import {
  messagingConfig,
  providerSettings,
  saveMessagingConfig,
  saveProviderSettings,
} from "../../domain/tickets/ticket-messaging.js";
import {
  actorOf,
  getTicket,
  listTickets,
  TICKET_PRIORITIES,
  TICKET_SOURCES,
  TICKET_STATUSES,
  updateTicket,
} from "../../domain/tickets/tickets.js";
import { ONE_LINE } from "../../model/org-state.js";
import {
  TicketHistoryViewSchema as HistoryEntry,
  MessagingConfigViewSchema as MessagingConfig,
  ProviderSettingsViewSchema as ProviderSettings,
  TicketViewSchema,
} from "../../model/tickets.js";
import type { AppDeps } from "../deps.js";
import { DEFAULT_PAGE_SIZE, PageOf } from "../pagination.js";
import { orgCaller } from "../principals.js";
import { defineRoute } from "../registry.js";
import { IdParams, Nullable, UuidString } from "../schemas.js";

const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

const TicketWithHistory = Type.Composite(
  [TicketViewSchema, Type.Object({ history: Type.Array(HistoryEntry) })],
  {
    title: "TicketWithHistory",
  },
);

export const ProviderSettingsChange = Type.Object(
  {
    base_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: "the Cloud API base, default https://graph.facebook.com/v21.0",
      }),
    ),
    // One line: the id goes into the provider's URL, and PostgreSQL refuses a NUL in text.
    phone_number_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: ONE_LINE })),
    access_token: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4096, description: "write-only" }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

const ticketDeps = (deps: AppDeps) => ({ db: deps.db, clock: deps.clock });
const settingsDeps = (deps: AppDeps) => ({
  db: deps.db,
  clock: deps.clock,
  serverKey: deps.config.serverKey,
});

const OrgIdParams = Type.Object({ orgId: UuidString });

export const ticketRoutes = [
  defineRoute({
    method: "get",
    path: "/tickets",
    tag: "Call Management",
    summary: "The org's auto-created tickets, newest first",
    auth: "org",
    permission: "tickets.read",
    query: Type.Object(
      {
        status: Type.Optional(literals(TICKET_STATUSES)),
        source: Type.Optional(literals(TICKET_SOURCES)),
        priority: Type.Optional(literals(TICKET_PRIORITIES)),
        phone: Type.Optional(
          Type.String({ minLength: 1, maxLength: 40, description: "part of the caller's number" }),
        ),
        from: Type.Optional(
          Type.String({ format: "date-time", description: "created at or after (inclusive)" }),
        ),
        to: Type.Optional(Type.String({ format: "date-time", description: "created before" })),
      },
      { additionalProperties: false },
    ),
    list: "envelope",
    responses: { 200: { description: "Tickets", schema: Type.Array(TicketViewSchema) } },
    handler: async ({ deps, query, principal }) => {
      const { limit, offset, ...filters } = query as typeof query & {
        limit?: number;
        offset?: number;
      };
      const page = await listTickets(ticketDeps(deps), orgCaller(principal).orgId, filters, {
        limit: limit ?? DEFAULT_PAGE_SIZE,
        offset: offset ?? 0,
      });
      return new PageOf(page.rows, page.total);
    },
  }),

  defineRoute({
    method: "get",
    path: "/tickets/{id}",
    tag: "Call Management",
    summary: "One ticket with its history of changes",
    auth: "org",
    permission: "tickets.read",
    params: IdParams,
    responses: { 200: { description: "The ticket", schema: TicketWithHistory } },
    handler: ({ deps, params, principal }) =>
      getTicket(ticketDeps(deps), orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "patch",
    path: "/tickets/{id}",
    tag: "Call Management",
    summary: "Change a ticket's status, priority, assignee or note (kept in its history)",
    auth: "org",
    permission: "tickets.write",
    params: IdParams,
    body: Type.Object(
      {
        status: Type.Optional(literals(TICKET_STATUSES)),
        priority: Type.Optional(literals(TICKET_PRIORITIES)),
        assignee: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
        note: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    responses: { 200: { description: "The ticket", schema: TicketWithHistory } },
    handler: ({ deps, params, body, principal }) => {
      const caller = orgCaller(principal);
      return updateTicket(ticketDeps(deps), caller.orgId, params.id, body, actorOf(caller));
    },
  }),

  defineRoute({
    method: "get",
    path: "/tickets/internal/provider",
    tag: "WhatsApp Admin",
    summary: "The messaging provider's settings (internal key); the access token is never answered",
    auth: "internal",
    responses: { 200: { description: "Settings", schema: ProviderSettings } },
    handler: ({ deps }) => providerSettings(settingsDeps(deps)),
  }),

  defineRoute({
    method: "put",
    path: "/tickets/internal/provider",
    tag: "WhatsApp Admin",
    summary: "Set the messaging provider's key, phone number id or base URL (internal key)",
    auth: "internal",
    body: ProviderSettingsChange,
    responses: { 200: { description: "Settings, without the token", schema: ProviderSettings } },
    handler: ({ deps, body }) => saveProviderSettings(settingsDeps(deps), body),
  }),

  defineRoute({
    method: "get",
    path: "/tickets/internal/messaging-config/{orgId}",
    tag: "Call Management",
    summary: "An org's ticket messaging config (internal key)",
    auth: "internal",
    params: OrgIdParams,
    responses: { 200: { description: "Config", schema: MessagingConfig } },
    handler: ({ deps, params }) => messagingConfig(settingsDeps(deps), params.orgId.toLowerCase()),
  }),

  defineRoute({
    method: "put",
    path: "/tickets/internal/messaging-config/{orgId}",
    tag: "Call Management",
    summary:
      "Set an org's ticket messaging config: message on/off, template, workflow (internal key)",
    auth: "internal",
    params: OrgIdParams,
    body: Type.Object(
      {
        enabled: Type.Optional(Type.Boolean()),
        template_name: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
        language: Type.Optional(Type.String({ minLength: 2, maxLength: 20 })),
        workflow_url: Type.Optional(
          Nullable(
            Type.String({
              minLength: 1,
              maxLength: 2048,
              description: "POSTed `{phone, source, ticket_id, timestamp, org_id}` on a new ticket",
            }),
          ),
        ),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    responses: { 200: { description: "Config", schema: MessagingConfig } },
    handler: ({ deps, params, body }) =>
      saveMessagingConfig(settingsDeps(deps), params.orgId.toLowerCase(), body),
  }),
];
