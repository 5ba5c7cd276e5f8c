// Platform users of an org (`/org-users`): people with a role.
import { Type } from "@sinclair/typebox";
import {
  API_KEY_PERMISSIONS,
  ROLE_ONLY_PERMISSIONS,
  ROLES,
} from "../../domain/access/permissions.js";
import {
  addOrgUser,
  listOrgUsers,
  removeOrgUser,
  updateOrgUser,
} from "../../domain/users/org-users.js";
import { ONE_LINE } from "../../model/org-state.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, Nullable, UuidString } from "../schemas.js";

const Role = Type.Union(ROLES.map((r) => Type.Literal(r)));
const PermissionName = Type.Union(
  [...API_KEY_PERMISSIONS, ...ROLE_ONLY_PERMISSIONS].map((p) => Type.Literal(p)),
);
const PersonName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: ONE_LINE,
});

const OrgUser = Type.Object(
  {
    id: UuidString,
    email: Type.String(),
    name: Nullable(Type.String()),
    role: Role,
    status: Type.String(),
    permissions: Type.Array(PermissionName),
    created_at: Type.String({ format: "date-time" }),
    updated_at: Type.String({ format: "date-time" }),
  },
  { title: "OrgUser" },
);

export const orgUserRoutes = [
  defineRoute({
    method: "get",
    path: "/org-users",
    tag: "Platform Users",
    summary: "List the org's platform users",
    auth: "org",
    permission: "org_users.read",
    list: "envelope",
    responses: { 200: { description: "Platform users by email", schema: Type.Array(OrgUser) } },
    handler: ({ deps, principal }) => listOrgUsers(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/org-users",
    tag: "Platform Users",
    summary: "Add a person (by email) with a role",
    description:
      "The person signs in with the identity provider; the email binds to their identity on first sign-in.",
    auth: "org",
    permission: "org_users.manage",
    body: Type.Object(
      {
        email: Type.String({ format: "email", maxLength: 320 }),
        name: Type.Optional(PersonName),
        role: Role,
      },
      { additionalProperties: false },
    ),
    responses: {
      201: { description: "The platform user", schema: OrgUser },
      409: { description: "Already a member" },
    },
    handler: ({ deps, body, principal }) => addOrgUser(deps, orgCaller(principal).orgId, body),
  }),

  defineRoute({
    method: "put",
    path: "/org-users/{id}",
    tag: "Platform Users",
    summary: "Change a platform user's name, role or status",
    auth: "org",
    permission: "org_users.manage",
    params: IdParams,
    body: Type.Object(
      {
        name: Type.Optional(PersonName),
        role: Type.Optional(Role),
        status: Type.Optional(Type.Union([Type.Literal("active"), Type.Literal("inactive")])),
      },
      { additionalProperties: false },
    ),
    responses: { 200: { description: "The platform user", schema: OrgUser } },
    handler: ({ deps, params, body, principal }) =>
      updateOrgUser(deps, orgCaller(principal).orgId, params.id, body),
  }),

  defineRoute({
    method: "delete",
    path: "/org-users/{id}",
    tag: "Platform Users",
    summary: "Remove a platform user (their tokens stop working at once)",
    auth: "org",
    permission: "org_users.manage",
    params: IdParams,
    responses: { 204: { description: "Removed" } },
    handler: async ({ deps, params, principal }) => {
      await removeOrgUser(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),
];
