// An org's phone numbers (`/dids`, SPEC.md §4.2) and their inbound routing.
// Who: any org credential reads; changes need `org.manage` (org key, org JWT, internal key, or a
// user JWT with the owner or admin role).
import { Type } from "@sinclair/typebox";
import { releaseDid } from "../../domain/routing/did-pool.js";
import { createDid, getDid, listDids, routeDid } from "../../domain/routing/dids.js";
import { DID_ROUTING_TYPES, ONE_LINE } from "../../model/org-state.js";
import { DidRoutingEnvironment, DidStatus, DidViewSchema } from "../../model/routing-views.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, Nullable } from "../schemas.js";

export const RoutingType = Type.Union(DID_ROUTING_TYPES.map((t) => Type.Literal(t)));
const RoutingTypeOrNull = Type.Union([
  ...DID_ROUTING_TYPES.map((t) => Type.Literal(t)),
  Type.Null(),
]);
export const DidNumberInput = Type.String({
  minLength: 1,
  maxLength: 32,
  pattern: ONE_LINE,
  description:
    "E.164 (+919876543210), local 11 digits starting 0 (09876543210) or international digits; spaces, dashes, dots and parentheses are removed",
});
const RoutingDestination = Type.String({
  maxLength: 64,
  pattern: ONE_LINE,
  description:
    "extension: a user's extension; queue: queue number (or UUID); ivr: IVR UUID (an IVR extension is accepted and stored as the UUID); external: a phone number, stored verbatim",
});

export const didRoutes = [
  defineRoute({
    method: "get",
    path: "/dids",
    tag: "DID Numbers",
    summary: "List the org's phone numbers",
    auth: "org",
    list: "envelope",
    responses: { 200: { description: "DIDs by number", schema: Type.Array(DidViewSchema) } },
    handler: ({ deps, principal }) => listDids(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/dids",
    tag: "DID Numbers",
    summary: "Add a phone number to the org (assigned at once)",
    description:
      "The number becomes the org's default when `is_default` is true or the org has no default yet. The sentinel +918065978000 is refused. Schedules a deploy (the gateway follows).",
    auth: "org",
    permission: "org.manage",
    body: Type.Object(
      {
        number: DidNumberInput,
        status: Type.Optional(DidStatus),
        routing_environment: Type.Optional(DidRoutingEnvironment),
        routing_type: Type.Optional(RoutingTypeOrNull),
        routing_destination: Type.Optional(Nullable(RoutingDestination)),
        is_default: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
    responses: {
      201: { description: "The DID", schema: DidViewSchema },
      409: { description: "The number exists already" },
    },
    handler: ({ deps, body, principal }) => createDid(deps, orgCaller(principal).orgId, body),
  }),

  defineRoute({
    method: "get",
    path: "/dids/{id}",
    tag: "DID Numbers",
    summary: "One of the org's phone numbers",
    auth: "org",
    params: IdParams,
    responses: { 200: { description: "The DID", schema: DidViewSchema } },
    handler: ({ deps, params, principal }) => getDid(deps, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "put",
    path: "/dids/{id}/routing",
    tag: "DID Numbers",
    summary: "Route inbound calls of a number to an extension, queue, IVR or external number",
    description:
      "`routing_type: null` unroutes the number (callers hear number-not-in-service). Schedules a deploy.",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: Type.Object(
      {
        routing_type: RoutingTypeOrNull,
        routing_destination: Type.Optional(Nullable(RoutingDestination)),
      },
      { additionalProperties: false },
    ),
    responses: { 200: { description: "The DID", schema: DidViewSchema } },
    handler: ({ deps, params, body, principal }) =>
      routeDid(deps, orgCaller(principal).orgId, params.id, body),
  }),

  defineRoute({
    method: "delete",
    path: "/dids/{id}",
    tag: "DID Numbers",
    summary: "Release a number back to the DID pool",
    description:
      "Immediate, no admin approval: the number leaves the org, becomes `available` in the pool " +
      "and unrouted. 409 while the org still relies on it (a user's outbound caller ID, say). " +
      "Releasing the default number makes the org's lowest remaining number the default. " +
      "Schedules a deploy (the gateway stops routing the number to the org).",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: {
      204: { description: "Released" },
      409: { description: "The org still relies on the number (a user's outbound caller ID)" },
    },
    handler: async ({ deps, params, principal }) => {
      await releaseDid(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),
];
