// Outbound routes of an org (`/outbound-routes`): dial patterns sent through a trunk.
// Who: any org credential reads; changes need `org.manage` (org key, org JWT, internal key, or a
// user JWT with the owner or admin role).
import { Type } from "@sinclair/typebox";
import {
  createOutboundRoute,
  deleteOutboundRoute,
  getOutboundRoute,
  listOutboundRoutes,
  updateOutboundRoute,
} from "../../domain/routing/outbound-routes.js";
import { boundsOf, OutboundRoute } from "../../model/org-state.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, modelField, Nullable, UuidString, updateBodyOf } from "../schemas.js";

const fields = OutboundRoute.properties;

const RouteSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    patterns: Type.Array(Type.String()),
    trunk: Type.String({ description: "the trunk's name" }),
    trunk_id: UuidString,
    strip_digits: Type.Integer(boundsOf(fields.strip_digits)),
    prepend_digits: Type.String(),
    caller_id_override: Nullable(Type.String()),
  },
  { title: "OutboundRoute" },
);

const editable = {
  name: Type.String({ ...fields.name }),
  patterns: Type.Array(fields.patterns.items, {
    minItems: 1,
    maxItems: 50,
    description: "Asterisk patterns (`_0X.`, `_[2-9]XXXXXXXXX`) or literal numbers",
  }),
  trunk: Type.String({
    minLength: 1,
    maxLength: 36,
    pattern: "^[A-Za-z0-9_-]+$",
    description: "a trunk of the org, by name or id",
  }),
  strip_digits: Type.Integer({ ...boundsOf(fields.strip_digits), description: "default 0" }),
  prepend_digits: modelField(fields.prepend_digits, "default empty"),
  caller_id_override: Nullable(
    Type.String({ pattern: "^\\+?[0-9]{7,15}$", description: "caller ID sent on this route" }),
  ),
};

const RouteCreate = Type.Object(
  {
    name: editable.name,
    patterns: editable.patterns,
    trunk: editable.trunk,
    strip_digits: Type.Optional(editable.strip_digits),
    prepend_digits: Type.Optional(editable.prepend_digits),
    caller_id_override: Type.Optional(editable.caller_id_override),
  },
  { additionalProperties: false },
);

const RouteUpdate = updateBodyOf(RouteCreate);

export const outboundRouteRoutes = [
  defineRoute({
    method: "get",
    path: "/outbound-routes",
    tag: "Outbound Routes",
    summary: "List the org's outbound routes in match order",
    auth: "org",
    list: "envelope",
    responses: { 200: { description: "Routes", schema: Type.Array(RouteSchema) } },
    handler: ({ deps, principal }) => listOutboundRoutes(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/outbound-routes",
    tag: "Outbound Routes",
    summary: "Create an outbound route through one of the org's trunks; schedules a deploy",
    auth: "org",
    permission: "org.manage",
    body: RouteCreate,
    responses: { 201: { description: "The route", schema: RouteSchema } },
    handler: ({ deps, body, principal }) =>
      createOutboundRoute(deps, orgCaller(principal).orgId, body),
  }),

  defineRoute({
    method: "get",
    path: "/outbound-routes/{id}",
    tag: "Outbound Routes",
    summary: "One outbound route",
    auth: "org",
    params: IdParams,
    responses: { 200: { description: "The route", schema: RouteSchema } },
    handler: ({ deps, params, principal }) =>
      getOutboundRoute(deps, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "put",
    path: "/outbound-routes/{id}",
    tag: "Outbound Routes",
    summary: "Update an outbound route (partial; patterns, when given, replace the list)",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: RouteUpdate,
    responses: { 200: { description: "The route", schema: RouteSchema } },
    handler: ({ deps, params, body, principal }) =>
      updateOutboundRoute(deps, orgCaller(principal).orgId, params.id, body),
  }),

  defineRoute({
    method: "delete",
    path: "/outbound-routes/{id}",
    tag: "Outbound Routes",
    summary: "Delete an outbound route; schedules a deploy",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, params, principal }) => {
      await deleteOutboundRoute(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),
];
