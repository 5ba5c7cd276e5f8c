// Ticket alerts (`/orgs/{orgId}/ticket-alerts`) and the WhatsApp admin (`/admin/whatsapp/*`:
// provider settings, message templates, a test send). Thin: the rules live in
// src/domain/tickets/ticket-alerts.ts and src/domain/tickets/ticket-messaging.ts.

import { Type } from "@sinclair/typebox";
import {
  ALERT_CHANNELS,
  createTicketAlert,
  deleteTicketAlert,
  getTicketAlert,
  listTicketAlerts,
  updateTicketAlert,
} from "../../domain/tickets/ticket-alerts.js";
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  providerSettings,
  saveProviderSettings,
  TEMPLATE_CATEGORIES,
  testSend,
  updateTemplate,
} from "../../domain/tickets/ticket-messaging.js";
import { TICKET_PRIORITIES, TICKET_SOURCES } from "../../domain/tickets/tickets.js";
import { createHttpPost } from "../../http-post.js";
import {
  WhatsappTemplateSchema as Template,
  TicketAlertViewSchema as TicketAlert,
} from "../../model/tickets.js";
import type { AppDeps } from "../deps.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, Nullable, UuidString } from "../schemas.js";
import { ProviderSettingsChange } from "./tickets.js";

const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((v) => Type.Literal(v)));
const DateTime = Type.String({ format: "date-time" });

const alertFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  channel: literals(ALERT_CHANNELS),
  recipient: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: "a phone number (7-15 digits) for `whatsapp`, an http(s) URL for `webhook`",
  }),
  sources: Type.Array(literals(TICKET_SOURCES), { minItems: 1, maxItems: 3 }),
  priorities: Type.Array(literals(TICKET_PRIORITIES), { minItems: 1, maxItems: 2 }),
  active: Type.Boolean({ default: true }),
};

const templateFields = {
  name: Type.String({ minLength: 1, maxLength: 512 }),
  language: Type.String({ minLength: 2, maxLength: 20 }),
  category: literals(TEMPLATE_CATEGORIES),
  body_text: Type.String({
    minLength: 1,
    maxLength: 1024,
    description: "text with {{1}}-style placeholders",
  }),
};

const ProviderSettings = Type.Object({
  base_url: Type.String(),
  phone_number_id: Nullable(Type.String()),
  access_token_set: Type.Boolean(),
  updated_at: Nullable(DateTime),
});

const alertDeps = (deps: AppDeps) => ({
  db: deps.db,
  clock: deps.clock,
  urlPolicy: { allowPrivate: deps.config.webhookAllowPrivate },
});
const settingsDeps = (deps: AppDeps) => ({
  db: deps.db,
  clock: deps.clock,
  serverKey: deps.config.serverKey,
});

const OrgParams = Type.Object({ orgId: UuidString });
const AlertParams = Type.Object({ orgId: UuidString, id: UuidString });

/** One POST for the test send: the provider URL is a user's, so no redirect is followed. */
const postOnce = createHttpPost({ timeoutMs: 10_000, redirect: "manual" });

export const ticketAlertRoutes = [
  defineRoute({
    method: "get",
    path: "/orgs/{orgId}/ticket-alerts",
    tag: "Ticket Alerts",
    summary: "The org's ticket alerts, oldest first",
    auth: "org",
    permission: "tickets.read",
    params: OrgParams,
    list: "envelope",
    responses: { 200: { description: "Alerts", schema: Type.Array(TicketAlert) } },
    handler: ({ deps, params, principal }) =>
      listTicketAlerts(alertDeps(deps), orgCaller(principal).orgId, params.orgId),
  }),
  defineRoute({
    method: "post",
    path: "/orgs/{orgId}/ticket-alerts",
    tag: "Ticket Alerts",
    summary: "Alert someone of new or escalated tickets of some sources and priorities",
    auth: "org",
    permission: "tickets.write",
    params: OrgParams,
    body: Type.Object(
      { ...alertFields, active: Type.Optional(alertFields.active) },
      { additionalProperties: false },
    ),
    responses: { 201: { description: "The alert", schema: TicketAlert } },
    handler: async ({ deps, params, body, principal }) =>
      reply(
        201,
        await createTicketAlert(alertDeps(deps), orgCaller(principal).orgId, params.orgId, body),
      ),
  }),
  defineRoute({
    method: "get",
    path: "/orgs/{orgId}/ticket-alerts/{id}",
    tag: "Ticket Alerts",
    summary: "One ticket alert",
    auth: "org",
    permission: "tickets.read",
    params: AlertParams,
    responses: { 200: { description: "The alert", schema: TicketAlert } },
    handler: ({ deps, params, principal }) =>
      getTicketAlert(alertDeps(deps), orgCaller(principal).orgId, params.orgId, params.id),
  }),
  defineRoute({
    method: "put",
    path: "/orgs/{orgId}/ticket-alerts/{id}",
    tag: "Ticket Alerts",
    summary: "Change a ticket alert (only the fields sent)",
    auth: "org",
    permission: "tickets.write",
    params: AlertParams,
    body: Type.Partial(Type.Object(alertFields), { additionalProperties: false }),
    responses: { 200: { description: "The alert", schema: TicketAlert } },
    handler: ({ deps, params, body, principal }) =>
      updateTicketAlert(alertDeps(deps), orgCaller(principal).orgId, params.orgId, params.id, body),
  }),
  defineRoute({
    method: "delete",
    path: "/orgs/{orgId}/ticket-alerts/{id}",
    tag: "Ticket Alerts",
    summary: "Delete a ticket alert",
    auth: "org",
    permission: "tickets.write",
    params: AlertParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, params, principal }) => {
      await deleteTicketAlert(alertDeps(deps), orgCaller(principal).orgId, params.orgId, params.id);
      return reply(204);
    },
  }),

  defineRoute({
    method: "get",
    path: "/admin/whatsapp/settings",
    tag: "WhatsApp Admin",
    summary: "The messaging provider's settings; the access token is never answered",
    auth: "admin",
    responses: { 200: { description: "Settings", schema: ProviderSettings } },
    handler: ({ deps }) => providerSettings(settingsDeps(deps)),
  }),
  defineRoute({
    method: "put",
    path: "/admin/whatsapp/settings",
    tag: "WhatsApp Admin",
    summary: "Set the provider's base URL, phone number id or access token",
    auth: "admin",
    body: ProviderSettingsChange,
    responses: { 200: { description: "Settings, without the token", schema: ProviderSettings } },
    handler: ({ deps, body }) => saveProviderSettings(settingsDeps(deps), body),
  }),
  defineRoute({
    method: "get",
    path: "/admin/whatsapp/templates",
    tag: "WhatsApp Admin",
    summary: "Message templates, by name and language",
    auth: "admin",
    list: "envelope",
    responses: { 200: { description: "Templates", schema: Type.Array(Template) } },
    handler: ({ deps }) => listTemplates(settingsDeps(deps)),
  }),
  defineRoute({
    method: "post",
    path: "/admin/whatsapp/templates",
    tag: "WhatsApp Admin",
    summary: "Add a message template",
    auth: "admin",
    body: Type.Object(templateFields, { additionalProperties: false }),
    responses: {
      201: { description: "The template", schema: Template },
      409: { description: "A template of that name and language exists" },
    },
    handler: async ({ deps, body }) => reply(201, await createTemplate(settingsDeps(deps), body)),
  }),
  defineRoute({
    method: "get",
    path: "/admin/whatsapp/templates/{id}",
    tag: "WhatsApp Admin",
    summary: "One message template",
    auth: "admin",
    params: IdParams,
    responses: { 200: { description: "The template", schema: Template } },
    handler: ({ deps, params }) => getTemplate(settingsDeps(deps), params.id),
  }),
  defineRoute({
    method: "put",
    path: "/admin/whatsapp/templates/{id}",
    tag: "WhatsApp Admin",
    summary: "Change a message template (only the fields sent)",
    auth: "admin",
    params: IdParams,
    body: Type.Partial(Type.Object(templateFields), { additionalProperties: false }),
    responses: {
      200: { description: "The template", schema: Template },
      409: { description: "A template of that name and language exists" },
    },
    handler: ({ deps, params, body }) => updateTemplate(settingsDeps(deps), params.id, body),
  }),
  defineRoute({
    method: "delete",
    path: "/admin/whatsapp/templates/{id}",
    tag: "WhatsApp Admin",
    summary: "Delete a message template",
    auth: "admin",
    params: IdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, params }) => {
      await deleteTemplate(settingsDeps(deps), params.id);
      return reply(204);
    },
  }),
  defineRoute({
    method: "post",
    path: "/admin/whatsapp/test-send",
    tag: "WhatsApp Admin",
    summary: "Send one template message through the provider now and report its answer",
    auth: "admin",
    body: Type.Object(
      {
        to: Type.String({ minLength: 7, maxLength: 20, description: "the recipient's number" }),
        template_name: Type.String({ minLength: 1, maxLength: 512 }),
        language: Type.String({ minLength: 2, maxLength: 20 }),
        parameters: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 20 })),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: {
        description: "The provider's answer (the request succeeds whatever it answered)",
        schema: Type.Object({
          success: Type.Boolean(),
          status_code: Nullable(Type.Integer()),
          error: Nullable(Type.String()),
        }),
      },
    },
    handler: ({ deps, body }) => testSend({ ...settingsDeps(deps), send: postOnce }, body),
  }),
];
