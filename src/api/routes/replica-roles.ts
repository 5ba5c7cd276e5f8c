// Who holds each role of the replicas (issue 23) and of each engine node (issue 25), admin only:
// what an unauthenticated `/health` no longer says (lease names carry AMI addresses and node
// ids). Read from the store's leases, so any replica answers for all of them.
import { Type } from "@sinclair/typebox";
import { listRoleHolders } from "../../domain/operations/role-holders.js";
import { RoleHolderViewSchema } from "../../model/replica-views.js";
import { defineRoute } from "../registry.js";

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
    responses: { 200: { description: "Role leases", schema: Type.Array(RoleHolderViewSchema) } },
    handler: ({ deps }) => listRoleHolders(deps),
  }),
];
