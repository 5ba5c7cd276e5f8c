// Platform users of an org (`/org-users`): people with a role.
import { Type } from "@sinclair/typebox";
import {
  addOrgUser,
  listOrgUsers,
  removeOrgUser,
  updateOrgUser,
} from "../../domain/users/org-users.js";
import { OrgUserViewSchema, RoleSchema } from "../../model/access-views.js";
import { ONE_LINE } from "../../model/org-state.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams } from "../schemas.js";

const PersonName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: ONE_LINE,
});

export const orgUserRoutes = [
  defineRoute({
    method: "get",
    path: "/org-users",
    tag: "Platform Users",
    summary: "List the org's platform users",
    auth: "org",
    permission: "org_users.read",
    list: "envelope",
    responses: {
      200: { description: "Platform users by email", schema: Type.Array(OrgUserViewSchema) },
    },
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
        role: RoleSchema,
      },
      { additionalProperties: false },
    ),
    responses: {
      201: { description: "The platform user", schema: OrgUserViewSchema },
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
        role: Type.Optional(RoleSchema),
        status: Type.Optional(Type.Union([Type.Literal("active"), Type.Literal("inactive")])),
      },
      { additionalProperties: false },
    ),
    responses: { 200: { description: "The platform user", schema: OrgUserViewSchema } },
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
