// What the API answers for an org's placement on the engine nodes (issue 25, docs/nodes.md): the
// response schema of `/admin/organizations/{id}/placement` (also nested in an admin's view of an
// org), and (as `Static<>`) its view type.
import { type Static, Type } from "@sinclair/typebox";
import { Nullable, UuidString } from "./view-shapes.js";

export const PlacementViewSchema = Type.Object(
  {
    node: Type.String({ description: "the primary node's name" }),
    node_id: UuidString,
    standby_node: Nullable(Type.String()),
    standby_node_id: Nullable(UuidString),
    pinned: Type.Boolean({ description: "an admin chose the node (else placement did)" }),
    placed_at: Type.String({ format: "date-time" }),
  },
  { title: "Placement" },
);
export type PlacementView = Static<typeof PlacementViewSchema>;
