// What the API answers for the routing resources (trunks, outbound routes, DIDs and their pool
// requests, IVRs): the response schemas of `/trunks`, `/outbound-routes`, `/dids`, the DID pool and
// `/ivrs`, and (as `Static<>`) the view types their use cases return.
import { type Static, Type } from "@sinclair/typebox";
import {
  ACTION_TYPES,
  boundsOf,
  DID_ROUTING_TYPES,
  Did,
  Ivr,
  OutboundRoute,
  POOL_STATUSES,
  Trunk,
} from "./org-state.js";
import { DateTime, modelField, Nullable, UuidString } from "./view-shapes.js";

const trunk = Trunk.properties;

/** A trunk as the API shows it: everything but the password. */
export const TrunkViewSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    host: Type.String(),
    port: Type.Integer(boundsOf(trunk.port)),
    transport: trunk.transport,
    username: Nullable(Type.String()),
    has_password: Type.Boolean({ description: "a password is stored (it is never returned)" }),
    registration: Type.Boolean(),
    codecs: Type.Array(Type.String()),
    match: Type.Array(Type.String()),
  },
  { title: "Trunk" },
);
export type TrunkView = Static<typeof TrunkViewSchema>;

export const OutboundRouteViewSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    patterns: Type.Array(Type.String()),
    trunk: Type.String({ description: "the trunk's name" }),
    trunk_id: UuidString,
    strip_digits: Type.Integer(boundsOf(OutboundRoute.properties.strip_digits)),
    prepend_digits: Type.String(),
    caller_id_override: Nullable(Type.String()),
  },
  { title: "OutboundRoute" },
);
export type OutboundRouteView = Static<typeof OutboundRouteViewSchema>;

const DidRoutingTypeOrNull = Type.Union([
  ...DID_ROUTING_TYPES.map((t) => Type.Literal(t)),
  Type.Null(),
]);
export const DidRoutingEnvironment = modelField(
  Did.properties.routing_environment,
  "which deployment receives inbound calls for the number; default prod",
);
export const DidStatus = modelField(Did.properties.status);

/** A phone number as the API shows it, in the org's list or the admin's pool. */
export const DidViewSchema = Type.Object(
  {
    id: UuidString,
    number: Type.String(),
    org_id: Nullable(UuidString),
    pool_status: Type.Union(POOL_STATUSES.map((s) => Type.Literal(s))),
    status: DidStatus,
    is_default: Type.Boolean({ description: "the org's default caller ID; at most one per org" }),
    routing_type: DidRoutingTypeOrNull,
    routing_destination: Nullable(Type.String()),
    routing_environment: DidRoutingEnvironment,
    source: Type.Union([Type.Literal("pool"), Type.Literal("org")], {
      description:
        "pool: the platform's number (added to the pool, assigned by an admin), dispatched to the org by the shared gateway from every carrier; org: added by the org itself with POST /dids, delivered by the org's own trunks only",
    }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "Did" },
);
export type DidView = Static<typeof DidViewSchema>;
/** A DID as stored, with its owner, source and timestamps: every field the API shows. */
export type DidRecord = DidView;

export const DID_REQUEST_STATUSES = ["pending", "approved", "rejected"] as const;
export type DidRequestStatus = (typeof DID_REQUEST_STATUSES)[number];

/** An org's request for a pool number, with the number it asks for. */
export const DidRequestViewSchema = Type.Object(
  {
    id: UuidString,
    did_id: UuidString,
    number: Type.String(),
    org_id: UuidString,
    status: Type.Union(DID_REQUEST_STATUSES.map((s) => Type.Literal(s))),
    requested_by: Nullable(Type.String()),
    created_at: DateTime,
    decided_at: Nullable(DateTime),
  },
  { title: "DidRequest" },
);
export type DidRequestView = Static<typeof DidRequestViewSchema>;

export const IvrMenuOptionViewSchema = Type.Object(
  {
    digit: Type.String(),
    action_type: Type.Union(ACTION_TYPES.map((t) => Type.Literal(t))),
    action_destination: Nullable(Type.String()),
    description: Type.String(),
  },
  { title: "IvrMenuOption" },
);
export type IvrMenuOptionView = Static<typeof IvrMenuOptionViewSchema>;

/** An IVR as the API shows it: the SPEC.md §2 fields, its menu options nested as `menuOptions`. */
export const IvrViewSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    extension: Type.String(),
    description: Type.String(),
    timeout: Type.Integer(boundsOf(Ivr.properties.timeout)),
    max_retries: Type.Integer(boundsOf(Ivr.properties.max_retries)),
    status: Type.Union([Type.Literal("active"), Type.Literal("inactive")]),
    greeting_language: Type.String(),
    greeting_voice: Type.String(),
    greeting_prompt: Nullable(
      Type.String({ description: "`greeting_ivr_<id>` once a greeting was generated" }),
    ),
    direct_extension_dial: Type.Boolean(),
    created_at: DateTime,
    updated_at: DateTime,
    menuOptions: Type.Array(IvrMenuOptionViewSchema, {
      description: "in the order they were saved",
    }),
  },
  { title: "Ivr" },
);
export type IvrView = Static<typeof IvrViewSchema>;
