// Engine nodes and placement (issue 25, docs/nodes.md), admin only: the Asterisk nodes the
// install deploys to (`/admin/engine-nodes`) and where each org lives
// (`/admin/organizations/{id}/placement`). An org's credentials never see either: placement is
// platform detail, not tenant data.
import { Type } from "@sinclair/typebox";
import {
  createEngineNode,
  deleteEngineNode,
  drainEngineNode,
  getEngineNode,
  listEngineNodes,
  updateEngineNode,
} from "../../domain/nodes/engine-nodes.js";
import { getPlacement, pinOrg } from "../../domain/nodes/placement.js";
import { EngineNodeFields } from "../../model/engine-node.js";
import { EngineNodeViewSchema, PlacementViewSchema } from "../../model/node-views.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, Nullable, UuidString } from "../schemas.js";

const TAG = "Configuration Management";

const NodeRef = Type.String({
  minLength: 1,
  maxLength: 63,
  pattern: "^[A-Za-z0-9-]*$",
  description: "the node's name or id",
});

export const engineNodeRoutes = [
  defineRoute({
    method: "get",
    path: "/admin/engine-nodes",
    tag: TAG,
    summary: "Every engine node with the orgs it holds, by name",
    description:
      "Empty on an install with no node defined: every org then runs on the one engine of PBX_AMI_*.",
    auth: "admin",
    list: "envelope",
    responses: { 200: { description: "Nodes", schema: Type.Array(EngineNodeViewSchema) } },
    handler: ({ deps }) => listEngineNodes(deps),
  }),
  defineRoute({
    method: "post",
    path: "/admin/engine-nodes",
    tag: TAG,
    summary: "Add an engine node; the first one takes every existing org",
    description:
      "The AMI secret is stored sealed and never answered. An install's first node takes every org that exists (they ran on the one implicit engine), so its capacity must hold them.",
    auth: "admin",
    body: Type.Object(
      {
        name: EngineNodeFields.name,
        ami_host: Type.Optional({ ...EngineNodeFields.ami_host, description: "default 127.0.0.1" }),
        ami_port: Type.Optional(EngineNodeFields.ami_port),
        ami_username: EngineNodeFields.ami_username,
        ami_secret: EngineNodeFields.ami_secret,
        sip_address: EngineNodeFields.sip_address,
        capacity: EngineNodeFields.capacity,
        state: Type.Optional({ ...EngineNodeFields.state, description: "default active" }),
      },
      { additionalProperties: false },
    ),
    responses: {
      201: { description: "The node", schema: EngineNodeViewSchema },
      409: { description: "The name is taken, or the first node cannot hold every existing org" },
    },
    handler: async ({ deps, body }) => reply(201, await createEngineNode(deps, body)),
  }),
  defineRoute({
    method: "get",
    path: "/admin/engine-nodes/{id}",
    tag: TAG,
    summary: "One engine node",
    auth: "admin",
    params: IdParams,
    responses: { 200: { description: "The node", schema: EngineNodeViewSchema } },
    handler: ({ deps, params }) => getEngineNode(deps, params.id),
  }),
  defineRoute({
    method: "put",
    path: "/admin/engine-nodes/{id}",
    tag: TAG,
    summary: "Change an engine node (partial)",
    description:
      "A new `ami_secret` replaces the sealed one. The capacity may not go below the orgs the node holds.",
    auth: "admin",
    params: IdParams,
    body: Type.Object(
      {
        name: Type.Optional(EngineNodeFields.name),
        ami_host: Type.Optional(EngineNodeFields.ami_host),
        ami_port: Type.Optional(EngineNodeFields.ami_port),
        ami_username: Type.Optional(EngineNodeFields.ami_username),
        ami_secret: Type.Optional(EngineNodeFields.ami_secret),
        sip_address: Type.Optional(EngineNodeFields.sip_address),
        capacity: Type.Optional(EngineNodeFields.capacity),
        state: Type.Optional(EngineNodeFields.state),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: "The node", schema: EngineNodeViewSchema },
      409: { description: "The name is taken, or the capacity is below the orgs held" },
    },
    handler: ({ deps, params, body }) => updateEngineNode(deps, params.id, body),
  }),
  defineRoute({
    method: "post",
    path: "/admin/engine-nodes/{id}/drain",
    tag: TAG,
    summary: "Drain an engine node: it keeps its orgs and is given no new one",
    auth: "admin",
    params: IdParams,
    responses: { 200: { description: "The node, now draining", schema: EngineNodeViewSchema } },
    handler: ({ deps, params }) => drainEngineNode(deps, params.id),
  }),
  defineRoute({
    method: "delete",
    path: "/admin/engine-nodes/{id}",
    tag: TAG,
    summary: "Remove an engine node that holds no org",
    auth: "admin",
    params: IdParams,
    responses: {
      204: { description: "Removed" },
      409: { description: "The node still holds orgs (as primary or standby)" },
    },
    handler: async ({ deps, params }) => {
      await deleteEngineNode(deps, params.id);
      return reply(204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/admin/organizations/{id}/placement",
    tag: TAG,
    summary: "Where an org lives: its primary engine node and standby",
    auth: "admin",
    params: IdParams,
    responses: {
      200: {
        description: "The org's placement",
        schema: Type.Object({
          org_id: UuidString,
          placement: Nullable(
            Type.Composite([PlacementViewSchema], {
              description: "null when no engine node is defined (the one implicit engine)",
            }),
          ),
        }),
      },
    },
    handler: async ({ deps, params }) => ({
      org_id: params.id,
      placement: await getPlacement(deps.db, params.id),
    }),
  }),
  defineRoute({
    method: "put",
    path: "/admin/organizations/{id}/placement",
    tag: TAG,
    summary: "Pin an org to an engine node (and choose or clear its standby)",
    description:
      "The node must be active with room, unless it already holds the org; the standby must be another node that is not down. An org whose move is under way is not pinned: wait until the move is done.",
    auth: "admin",
    params: IdParams,
    body: Type.Object(
      {
        node: NodeRef,
        standby_node: Type.Optional(Nullable({ ...NodeRef, description: "null clears it" })),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: "The placement", schema: PlacementViewSchema },
      409: { description: "The node is draining, down or full, or the org is being moved" },
    },
    handler: ({ deps, params, body }) =>
      pinOrg(deps.db, params.id, body, deps.clock().toISOString()),
  }),
];
