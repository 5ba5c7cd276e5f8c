// The shared DID pool (`/did-pool/*`, SPEC.md §3): admins add numbers and decide requests, orgs
// see available numbers, request them and pick their default.
// Who: `/did-pool/admin*` admin JWT; `available`, `requests` and `{id}/request` any org
// credential; `{id}/set-default` needs `dids.set_default` (owner or manager role; org key, org
// JWT and internal key hold it too).
import { Type } from "@sinclair/typebox";
import {
  addPoolDid,
  adminUpdateDid,
  approveDidRequest,
  listAllDids,
  listAvailableDids,
  listDidRequests,
  listOwnDidRequests,
  rejectDidRequest,
  requestPoolDid,
  setDefaultDid,
} from "../../domain/routing/did-pool.js";
import { POOL_STATUSES } from "../../model/org-state.js";
import {
  DidRequestViewSchema,
  DidRoutingEnvironment,
  DidStatus,
  DidViewSchema,
} from "../../model/routing-views.js";
import { orgCaller } from "../principals.js";
import { defineRoute } from "../registry.js";
import { IdParams } from "../schemas.js";
import { DidNumberInput } from "./dids.js";

/**
 * Where the admin update of a pool DID is documented: SPEC.md §4.2's path. Linters call it
 * ambiguous beside `/did-pool/{id}/request` (scripts/lint-openapi.ts allows that one case).
 */
const ADMIN_UPDATE_PATH = "/did-pool/admin/{id}";

/** The admin update of a pool DID at `path`; with `aliasOf`, an undocumented second path. */
function adminUpdateRoute(path: string, aliasOf?: string) {
  return defineRoute({
    method: "put",
    path,
    ...(aliasOf ? { aliasOf } : {}),
    tag: "DID Pool",
    summary: "Update any number (admin): routing_environment, status, pool_status",
    description:
      "pool_status moves only unassigned numbers between `available` and `reserved`; the sentinel stays `reserved`. A change to an assigned number schedules its org's deploy and the gateway. The server also answers the same operation at `PUT /did-pool/admin/dids/{id}` (where earlier documents listed it).",
    auth: "admin",
    params: IdParams,
    body: Type.Object(
      {
        routing_environment: Type.Optional(DidRoutingEnvironment),
        status: Type.Optional(DidStatus),
        pool_status: Type.Optional(
          Type.Union([Type.Literal("available"), Type.Literal("reserved")]),
        ),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: "The DID", schema: DidViewSchema },
      409: { description: "The number is assigned, pending or the reserved sentinel" },
    },
    handler: ({ deps, params, body }) => adminUpdateDid(deps, params.id, body),
  });
}

export const didPoolRoutes = [
  defineRoute({
    method: "post",
    path: "/did-pool/admin",
    tag: "DID Pool",
    summary: "Add a number to the pool (admin); it is `available` to orgs",
    description: "The sentinel +918065978000 is stored `reserved` and never offered.",
    auth: "admin",
    body: Type.Object(
      {
        number: DidNumberInput,
        status: Type.Optional(DidStatus),
        routing_environment: Type.Optional(DidRoutingEnvironment),
      },
      { additionalProperties: false },
    ),
    responses: {
      201: { description: "The pool DID", schema: DidViewSchema },
      409: { description: "The number exists already" },
    },
    handler: ({ deps, body }) => addPoolDid(deps, body),
  }),

  defineRoute({
    method: "get",
    path: "/did-pool/admin",
    tag: "DID Pool",
    summary: "Every number, pooled or assigned (admin)",
    auth: "admin",
    query: Type.Object({
      pool_status: Type.Optional(Type.Union(POOL_STATUSES.map((s) => Type.Literal(s)))),
    }),
    list: "envelope",
    responses: { 200: { description: "DIDs by number", schema: Type.Array(DidViewSchema) } },
    handler: ({ deps, query }) => listAllDids(deps, query.pool_status),
  }),

  adminUpdateRoute(ADMIN_UPDATE_PATH),
  adminUpdateRoute("/did-pool/admin/dids/{id}", ADMIN_UPDATE_PATH),

  defineRoute({
    method: "get",
    path: "/did-pool/admin/requests",
    tag: "DID Pool",
    summary: "Requests for pool numbers (admin), oldest first",
    auth: "admin",
    query: Type.Object({ status: Type.Optional(DidRequestViewSchema.properties.status) }),
    list: "envelope",
    responses: { 200: { description: "Requests", schema: Type.Array(DidRequestViewSchema) } },
    handler: ({ deps, query }) => listDidRequests(deps, query.status),
  }),

  defineRoute({
    method: "post",
    path: "/did-pool/admin/requests/{id}/approve",
    tag: "DID Pool",
    summary: "Approve a request: the number is assigned to the org",
    description:
      "An org without a default DID gets this one as its default (its first DID). Schedules the org's deploy and the gateway.",
    auth: "admin",
    params: IdParams,
    responses: {
      200: { description: "The approved request", schema: DidRequestViewSchema },
      409: { description: "The request is not pending" },
    },
    handler: ({ deps, params }) => approveDidRequest(deps, params.id),
  }),

  defineRoute({
    method: "post",
    path: "/did-pool/admin/requests/{id}/reject",
    tag: "DID Pool",
    summary: "Reject a request: the number is available again",
    auth: "admin",
    params: IdParams,
    responses: {
      200: { description: "The rejected request", schema: DidRequestViewSchema },
      409: { description: "The request is not pending" },
    },
    handler: ({ deps, params }) => rejectDidRequest(deps, params.id),
  }),

  defineRoute({
    method: "get",
    path: "/did-pool/available",
    tag: "DID Pool",
    summary: "Numbers an org may request",
    auth: "org",
    list: "envelope",
    responses: {
      200: { description: "Available DIDs by number", schema: Type.Array(DidViewSchema) },
    },
    handler: ({ deps }) => listAvailableDids(deps),
  }),

  defineRoute({
    method: "get",
    path: "/did-pool/requests",
    tag: "DID Pool",
    summary: "The org's own requests for pool numbers",
    auth: "org",
    list: "envelope",
    responses: {
      200: { description: "Requests, oldest first", schema: Type.Array(DidRequestViewSchema) },
    },
    handler: ({ deps, principal }) => listOwnDidRequests(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/did-pool/{id}/request",
    tag: "DID Pool",
    summary: "Request an available number; it waits for an admin's decision",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: {
      201: { description: "The pending request", schema: DidRequestViewSchema },
      409: { description: "The number is not available" },
    },
    handler: ({ deps, params, principal }) => requestPoolDid(deps, orgCaller(principal), params.id),
  }),

  defineRoute({
    method: "post",
    path: "/did-pool/{id}/set-default",
    tag: "DID Pool",
    summary: "Make a number the org's default caller ID (owner or manager role)",
    description:
      "Sets is_default on this DID and clears it on every other DID of the org in one transaction; schedules the org's deploy.",
    auth: "org",
    permission: "dids.set_default",
    params: IdParams,
    responses: {
      200: { description: "The new default DID", schema: DidViewSchema },
      409: { description: "The DID is not assigned to this organization" },
    },
    handler: ({ deps, params, principal }) =>
      setDefaultDid(deps, orgCaller(principal).orgId, params.id),
  }),
];
