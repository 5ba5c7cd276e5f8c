// What the API answers about the replicas' roles (`GET /admin/replica-roles`, issues 23 and 25):
// the response schema, and (as `Static<>`) the view type its use case returns.
import { type Static, Type } from "@sinclair/typebox";
import { DateTime, Nullable } from "./view-shapes.js";

/** One role's lease as admins see it. */
export const RoleHolderViewSchema = Type.Object(
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
export type RoleHolderView = Static<typeof RoleHolderViewSchema>;
