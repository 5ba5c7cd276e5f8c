// Who holds each role of the replicas (issue 23) and of each engine node (issue 25), admin only:
// what an unauthenticated `/health` no longer says (lease names carry AMI addresses and node
// ids). Read from the store's leases, so any replica answers for all of them.
import { Type } from "@sinclair/typebox";
import { listRoleHolders } from "../../domain/operations/role-holders.js";
import { defineRoute } from "../registry.js";
import { Nullable } from "../schemas.js";

const DateTime = Type.String({ format: "date-time" });

const RoleHolder = Type.Object(
  {
    lease: Type.String({
      description:
        "the lease's name, e.g. deployer:node:<node id>, deployer:10.0.0.5:5038, retention",
    }),
    role: Type.String({
      description:
        "deployer, call-ingest, ticket-poller, retention, edge-sync or org-moves (what /health lists)",
    }),
    engine: Nullable(
      Type.String({
        description:
          "the engine node's name, the implicit engine's AMI host:port or files; null for a role of the whole install",
      }),
    ),
    holder: Type.String({ description: "the replica id that took the lease last" }),
    acquired_at: DateTime,
    expires_at: DateTime,
    held: Type.Boolean({
      description: "not expired: holder runs the role (else nobody does until a replica takes it)",
    }),
  },
  { title: "RoleHolder" },
);

export const replicaRoleRoutes = [
  defineRoute({
    method: "get",
    path: "/admin/replica-roles",
    tag: "Configuration Management",
    summary: "Which replica runs each role (deployers, call ingest, poller, retention, moves)",
    description:
      "Every role's lease in the store, by lease name, whichever replica holds it: the details /health leaves out. A lease whose holder stopped renewing reads held: false until another replica takes it (within about 5 s).",
    auth: "admin",
    list: "envelope",
    responses: { 200: { description: "Role leases", schema: Type.Array(RoleHolder) } },
    handler: ({ deps }) => listRoleHolders(deps),
  }),
];
