// CRM (`/crm/*`): leads, clients and the org's custom fields. Org credentials; `ak_` keys and
// user roles need `crm.read` to read, `crm.write` to create, update and convert, `crm.delete`
// to delete, `crm.assign` to set a record's owner and `crm.customize` to define custom fields.
// A record's calls are call data too: they also need `calls.read`.
import { type TSchema, Type } from "@sinclair/typebox";
import type { Permission } from "../../domain/access/permissions.js";
import type { OrgPrincipal } from "../../domain/access/principal.js";
import {
  type CrmKind,
  type CrmListQuery,
  type CrmRecordInput,
  callsOfRecord,
  contactsOfNumber,
  convertLead,
  createRecord,
  deleteRecord,
  getRecord,
  listRecords,
  updateRecord,
} from "../../domain/crm/crm.js";
import {
  createField,
  deleteField,
  getField,
  listFields,
  updateField,
} from "../../domain/crm/crm-fields.js";
import { Forbidden } from "../../domain/errors.js";
import { CallViewSchema as Call } from "../../model/call-views.js";
import {
  CRM_TAG,
  CrmClient,
  CrmField,
  CrmLead,
  CUSTOM_FIELD_NAME,
  CUSTOM_FIELD_TYPES,
  EMAIL,
  LEAD_STATUSES,
} from "../../model/crm.js";
import { ONE_LINE } from "../../model/org-state.js";
import { PageOf } from "../pagination.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, Nullable } from "../schemas.js";
import { callPage, pageFields } from "./calls.js";

/** What the route's own `permission` cannot say: a second permission one field of it needs. */
function requirePermission(principal: OrgPrincipal, permission: Permission): void {
  if (principal.permissions === "all" || principal.permissions.has(permission)) return;
  throw new Forbidden(
    principal.via === "api_key"
      ? `API key lacks permission: ${permission}`
      : `Role '${principal.role}' lacks permission: ${permission}`,
  );
}

const LeadStatus = Type.Union(LEAD_STATUSES.map((s) => Type.Literal(s)));

const editable = {
  name: Type.String({ minLength: 1, maxLength: 200, pattern: ONE_LINE }),
  phone: Nullable(
    Type.String({
      minLength: 1,
      maxLength: 32,
      pattern: ONE_LINE,
      description:
        "7-15 digits, optional `+`; spaces, dashes, dots and brackets are ignored. Stored in E.164 (`080...` becomes `+9180...`)",
    }),
  ),
  email: Nullable(Type.String({ maxLength: 254, pattern: EMAIL })),
  company: Nullable(Type.String({ maxLength: 200, pattern: ONE_LINE })),
  owner: Nullable(
    Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: ONE_LINE,
      description: "who works the record; setting it needs `crm.assign`",
    }),
  ),
  tags: Type.Array(Type.String({ pattern: CRM_TAG }), { maxItems: 50 }),
  notes: Type.String({ maxLength: 10_000 }),
  custom_fields: Type.Object(
    {},
    {
      additionalProperties: true,
      maxProperties: 100,
      description:
        "values by custom field name (`/crm/fields`), checked against each field's type; `null` removes a value. Every required field must have a value after the write",
    },
  ),
};

function recordBody(kind: CrmKind, create: boolean) {
  const opt = <T extends TSchema>(s: T) => Type.Optional(s);
  return Type.Object(
    {
      name: create ? editable.name : opt(editable.name),
      phone: opt(editable.phone),
      email: opt(editable.email),
      company: opt(editable.company),
      owner: opt(editable.owner),
      tags: opt(editable.tags),
      notes: opt(editable.notes),
      custom_fields: opt(editable.custom_fields),
      ...(kind === "lead" ? { status: opt(LeadStatus) } : {}),
    },
    { additionalProperties: false },
  );
}

const listQuery = (kind: CrmKind) =>
  Type.Object(
    {
      q: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 100,
          pattern: ONE_LINE,
          description: "text in the name, e-mail or company, or digits in the phone",
        }),
      ),
      ...(kind === "lead" ? { status: Type.Optional(LeadStatus) } : {}),
      owner: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 100,
          pattern: ONE_LINE,
          description: "exact owner",
        }),
      ),
      tag: Type.Optional(Type.String({ pattern: CRM_TAG })),
    },
    { additionalProperties: false },
  );

function asInput(body: Record<string, unknown>): CrmRecordInput {
  return body as CrmRecordInput;
}

function recordRoutes(kind: CrmKind) {
  const base = `/crm/${kind}s`;
  const Schema = kind === "lead" ? CrmLead : CrmClient;
  const noun = kind === "lead" ? "lead" : "client";
  return [
    defineRoute({
      method: "get",
      path: base,
      tag: "CRM",
      summary: `List the org's ${noun}s (search, filters), oldest first`,
      auth: "org",
      permission: "crm.read",
      query: listQuery(kind),
      list: "envelope",
      responses: { 200: { description: `${noun}s`, schema: Type.Array(Schema) } },
      handler: async ({ deps, principal, query }) => {
        const { rows, total } = await listRecords(
          deps,
          orgCaller(principal).orgId,
          kind,
          query as CrmListQuery,
        );
        return new PageOf(rows, total);
      },
    }),
    defineRoute({
      method: "post",
      path: base,
      tag: "CRM",
      summary: `Create a ${noun}; emits crm.${kind}.created`,
      auth: "org",
      permission: "crm.write",
      body: recordBody(kind, true),
      responses: { 201: { description: `The ${noun}`, schema: Schema } },
      handler: async ({ deps, principal, body }) => {
        const caller = orgCaller(principal);
        if (body.owner !== undefined) requirePermission(caller, "crm.assign");
        const created = await createRecord(deps, caller.orgId, kind, {
          ...asInput(body),
          name: body.name as string,
        });
        return reply(201, created);
      },
    }),
    defineRoute({
      method: "get",
      path: `${base}/{id}`,
      tag: "CRM",
      summary: `One ${noun}`,
      auth: "org",
      permission: "crm.read",
      params: IdParams,
      responses: { 200: { description: `The ${noun}`, schema: Schema } },
      handler: ({ deps, principal, params }) =>
        getRecord(deps, orgCaller(principal).orgId, kind, params.id),
    }),
    defineRoute({
      method: "put",
      path: `${base}/{id}`,
      tag: "CRM",
      summary: `Update a ${noun} (partial); emits crm.${kind}.updated${kind === "lead" ? " and crm.lead.status_changed" : ""}`,
      auth: "org",
      permission: "crm.write",
      params: IdParams,
      body: recordBody(kind, false),
      responses: { 200: { description: `The ${noun}`, schema: Schema } },
      handler: ({ deps, principal, params, body }) => {
        const caller = orgCaller(principal);
        if (body.owner !== undefined) requirePermission(caller, "crm.assign");
        return updateRecord(deps, caller.orgId, kind, params.id, asInput(body));
      },
    }),
    defineRoute({
      method: "delete",
      path: `${base}/{id}`,
      tag: "CRM",
      summary: `Delete a ${noun}`,
      auth: "org",
      permission: "crm.delete",
      params: IdParams,
      responses: { 204: { description: "Deleted" } },
      handler: async ({ deps, principal, params }) => {
        await deleteRecord(deps, orgCaller(principal).orgId, kind, params.id);
        return reply(204);
      },
    }),
    defineRoute({
      method: "get",
      path: `${base}/{id}/calls`,
      tag: "CRM",
      summary: `The org's calls from or to the ${noun}'s phone, newest first`,
      description: "Needs `calls.read` and `crm.read`. A record without a phone has no calls.",
      auth: "org",
      permission: "calls.read",
      params: IdParams,
      query: Type.Object(pageFields, { additionalProperties: false }),
      responses: {
        200: {
          description: "one page of calls, newest first",
          schema: callPage(Call),
        },
      },
      handler: ({ deps, principal, params, query }) => {
        const caller = orgCaller(principal);
        requirePermission(caller, "crm.read");
        return callsOfRecord(deps, caller.orgId, kind, params.id, query);
      },
    }),
  ];
}

const FieldBody = Type.Object(
  {
    name: Type.String({ pattern: CUSTOM_FIELD_NAME, description: "the key in `custom_fields`" }),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: ONE_LINE })),
    type: Type.Union(CUSTOM_FIELD_TYPES.map((t) => Type.Literal(t))),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: ONE_LINE }), {
        maxItems: 100,
        description: "the allowed values; required for, and only for, `enum`",
      }),
    ),
    required: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

export const crmRoutes = [
  ...recordRoutes("lead"),
  defineRoute({
    method: "post",
    path: "/crm/leads/{id}/convert",
    tag: "CRM",
    summary: "Convert a lead to a client (the lead becomes `won`; both keep a link)",
    description:
      "Emits crm.client.created, crm.lead.updated and, unless the lead was already won, crm.lead.status_changed. 409 when the lead was already converted.",
    auth: "org",
    permission: "crm.write",
    params: IdParams,
    responses: {
      200: {
        description: "The lead and its new client",
        schema: Type.Object({ lead: CrmLead, client: CrmClient }),
      },
      409: { description: "Already converted" },
    },
    handler: ({ deps, principal, params }) =>
      convertLead(deps, orgCaller(principal).orgId, params.id),
  }),
  ...recordRoutes("client"),
  defineRoute({
    method: "get",
    path: "/crm/lookup",
    tag: "CRM",
    summary: "The org's leads and clients with this phone number (a caller's contact)",
    auth: "org",
    permission: "crm.read",
    query: Type.Object(
      { phone: editable.phone },
      { additionalProperties: false, required: ["phone"] },
    ),
    responses: {
      200: {
        description: "Matching records, oldest first",
        schema: Type.Object({ leads: Type.Array(CrmLead), clients: Type.Array(CrmClient) }),
      },
    },
    handler: async ({ deps, principal, query }) => {
      const found = await contactsOfNumber(deps, orgCaller(principal).orgId, String(query.phone));
      return {
        leads: found.filter((r) => "status" in r),
        clients: found.filter((r) => !("status" in r)),
      };
    },
  }),
  defineRoute({
    method: "get",
    path: "/crm/fields",
    tag: "CRM",
    summary: "The org's custom fields of leads and clients",
    auth: "org",
    permission: "crm.read",
    list: "envelope",
    responses: { 200: { description: "Fields, oldest first", schema: Type.Array(CrmField) } },
    handler: ({ deps, principal }) => listFields(deps, orgCaller(principal).orgId),
  }),
  defineRoute({
    method: "post",
    path: "/crm/fields",
    tag: "CRM",
    summary: "Define a custom field (checked on every later write of a lead or client)",
    auth: "org",
    permission: "crm.customize",
    body: FieldBody,
    responses: {
      201: { description: "The field", schema: CrmField },
      409: { description: "A field of this name exists" },
    },
    handler: async ({ deps, principal, body }) =>
      reply(201, await createField(deps, orgCaller(principal).orgId, body)),
  }),
  defineRoute({
    method: "get",
    path: "/crm/fields/{id}",
    tag: "CRM",
    summary: "One custom field",
    auth: "org",
    permission: "crm.read",
    params: IdParams,
    responses: { 200: { description: "The field", schema: CrmField } },
    handler: ({ deps, principal, params }) => getField(deps, orgCaller(principal).orgId, params.id),
  }),
  defineRoute({
    method: "put",
    path: "/crm/fields/{id}",
    tag: "CRM",
    summary: "Change a custom field's label, enum options or required flag (not its name or type)",
    auth: "org",
    permission: "crm.customize",
    params: IdParams,
    body: Type.Object(
      {
        label: FieldBody.properties.label,
        options: FieldBody.properties.options,
        required: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
    responses: { 200: { description: "The field", schema: CrmField } },
    handler: ({ deps, principal, params, body }) =>
      updateField(deps, orgCaller(principal).orgId, params.id, body),
  }),
  defineRoute({
    method: "delete",
    path: "/crm/fields/{id}",
    tag: "CRM",
    summary: "Delete a custom field and its value in every lead and client",
    auth: "org",
    permission: "crm.customize",
    params: IdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, principal, params }) => {
      await deleteField(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),
];
