// What the API answers about the engine nodes (issue 25, docs/nodes.md): a node
// (`/admin/engine-nodes`), an org's placement (`/admin/organizations/{id}/placement`, also nested
// in an admin's view of an org) and an org's move (`/admin/organizations/{id}/move`): the response
// schemas, and (as `Static<>`) the view types their use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { EngineNodeFields } from "./engine-node.js";
import { MOVE_PHASES } from "./org-move.js";
import { DateTime, Nullable, UuidString } from "./view-shapes.js";

/** A node as admins see it, with the orgs it holds; its AMI secret is never shown. */
export const EngineNodeViewSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    ami_host: Type.String(),
    ami_port: Type.Integer(),
    ami_username: Type.String(),
    sip_address: Type.String(),
    capacity: Type.Integer(),
    state: EngineNodeFields.state,
    orgs: Type.Integer({ description: "orgs placed on the node as their primary" }),
    standby_orgs: Type.Integer({ description: "orgs with the node as their standby" }),
    system_name: Type.Union([Type.String(), Type.Null()], {
      description:
        "its Asterisk's systemname at its last AMI connect ('' none); null until first reached",
    }),
    problem: Type.Union([Type.String(), Type.Null()], {
      description:
        "why the node's call events are not stored: no systemname among several nodes, or another node's",
    }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "EngineNode" },
);
export type EngineNodeView = Static<typeof EngineNodeViewSchema>;

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

/** A move as admins see it (`GET /admin/organizations/{id}/move`, `pbxctl org move`). */
export const OrgMoveViewSchema = Type.Object(
  {
    id: UuidString,
    org_id: UuidString,
    from_node: Type.String({ description: "the node the org leaves (name)" }),
    to_node: Type.String({ description: "the node the org goes to (name)" }),
    phase: Type.Union(
      MOVE_PHASES.map((phase) => Type.Literal(phase)),
      {
        description:
          "deploying (on the target, verified), switching (placement and edge), re-registering (phones told to re-register), draining (waiting for the org's calls on the source to end), removing (from the source), done",
      },
    ),
    call_drain_timeout_seconds: Type.Integer(),
    requested_at: DateTime,
    updated_at: DateTime,
    finished_at: Nullable(DateTime),
    phones_notified: Nullable(
      Type.Integer({ description: "phones sent a NOTIFY check-sync; null without an edge" }),
    ),
    drain: Nullable(
      Type.Object({
        started_at: DateTime,
        deadline: DateTime,
        calls: Nullable(
          Type.Integer({ description: "the org's calls still up on the source at the last look" }),
        ),
        timed_out: Type.Boolean({
          description: "the deadline passed with calls up: the move went on without waiting",
        }),
      }),
    ),
    last_error: Nullable(
      Type.String({ description: "why the current step failed last; it is retried" }),
    ),
  },
  { title: "OrgMove" },
);
export type OrgMoveView = Static<typeof OrgMoveViewSchema>;
