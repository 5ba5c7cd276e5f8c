// What the API answers for a trunk and an outbound route: the response schemas of `/trunks` and
// `/outbound-routes`, and (as `Static<>`) the view types their use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { boundsOf, OutboundRoute, Trunk } from "./org-state.js";
import { Nullable, UuidString } from "./view-shapes.js";

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
