// Organizations (SPEC.md §4.2) and the org request/approval flow (§3).
import { Type } from "@sinclair/typebox";
import { regenerateOrganization } from "../../domain/config/config-deploy.js";
import {
  adminUpdateOrganization,
  approveRequest,
  createOrganization,
  getOwnOrganization,
  listOrganizations,
  listOwnRequests,
  listPendingRequests,
  ORG_TYPES,
  rejectRequest,
  requestOrganization,
  updateOwnOrganization,
} from "../../domain/orgs/organizations.js";
import { DeployViewSchema as DeployResult } from "../../model/deploy-views.js";
import { ONE_LINE, OrgSettings, Slug } from "../../model/org-state.js";
import {
  AdminOrganizationViewSchema,
  OrganizationRequestViewSchema,
  OrganizationViewSchema,
} from "../../model/org-views.js";
import { orgCaller, pendingCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, modelField, UuidString } from "../schemas.js";

const OrgName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: ONE_LINE,
});
const OrgType = Type.Union(ORG_TYPES.map((t) => Type.Literal(t)));

const SettingsPatch = Type.Object(
  {
    recording_enabled: Type.Optional(
      modelField(
        OrgSettings.properties.recording_enabled,
        "org-wide switch; false records no call whatever the user flags say",
      ),
    ),
    max_concurrent_calls: Type.Optional(
      modelField(OrgSettings.properties.max_concurrent_calls, "0 = no limit"),
    ),
  },
  { additionalProperties: false },
);

const OrgSlug = Type.String({
  pattern: Slug.pattern,
  description: "lowercase letters, digits and -, at most 63; unique (409 when another org has it)",
});

export const organizationRoutes = [
  defineRoute({
    method: "get",
    path: "/organizations",
    tag: "Organization Management",
    summary: "List organizations (admin)",
    auth: "admin",
    list: "envelope",
    responses: {
      200: { description: "Every org", schema: Type.Array(AdminOrganizationViewSchema) },
    },
    handler: ({ deps }) => listOrganizations(deps),
  }),

  defineRoute({
    method: "post",
    path: "/organizations",
    tag: "Organization Management",
    summary: "Create an active organization (admin); the key and secret are shown once",
    auth: "admin",
    body: Type.Object(
      {
        name: OrgName,
        slug: Type.Optional(OrgSlug),
        type: Type.Optional(OrgType),
        settings: Type.Optional(SettingsPatch),
      },
      { additionalProperties: false },
    ),
    responses: {
      201: {
        description: "The org with its credentials",
        schema: Type.Composite([
          AdminOrganizationViewSchema,
          Type.Object({ api_key: Type.String(), api_secret: Type.String() }),
        ]),
      },
      409: {
        description:
          "The slug is taken by another organization, or no active engine node has room for it",
      },
    },
    handler: ({ deps, body }) => createOrganization(deps, body),
  }),

  defineRoute({
    method: "get",
    path: "/organizations/{id}",
    tag: "Organization Management",
    summary: "The caller's own organization",
    auth: "org",
    params: IdParams,
    responses: { 200: { description: "The org", schema: OrganizationViewSchema } },
    handler: ({ deps, params, principal }) =>
      getOwnOrganization(deps, orgCaller(principal), params.id),
  }),

  defineRoute({
    method: "put",
    path: "/organizations/{id}",
    tag: "Organization Management",
    summary: "Update the caller's own organization (name, slug, type, settings)",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: Type.Object(
      {
        name: Type.Optional(OrgName),
        slug: Type.Optional(OrgSlug),
        type: Type.Optional(OrgType),
        settings: Type.Optional(SettingsPatch),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: "The updated org", schema: OrganizationViewSchema },
      409: { description: "The slug is taken by another organization" },
    },
    handler: ({ deps, params, body, principal }) =>
      updateOwnOrganization(deps, orgCaller(principal), params.id, body),
  }),

  defineRoute({
    method: "post",
    path: "/organizations/{id}/regenerate",
    tag: "Organization Management",
    summary: "Regenerate the org's engine configuration and deploy it now (own org)",
    description:
      "Compiles the org from the store and deploys what changed (as `POST /config/deploy`). " +
      "A server without an engine directory schedules a background deploy instead (202).",
    auth: "org",
    permission: "config.deploy",
    params: IdParams,
    responses: {
      200: { description: "What the deploy changed", schema: DeployResult },
      202: {
        description: "Deploy scheduled (no engine on this server)",
        schema: Type.Object({ success: Type.Literal(true), scheduled: Type.Literal(true) }),
      },
      502: { description: "Writing or reloading failed" },
    },
    handler: async ({ deps, params, principal }) => {
      const result = await regenerateOrganization(deps, orgCaller(principal), params.id);
      return "scheduled" in result ? reply(202, result) : result;
    },
  }),

  defineRoute({
    method: "post",
    path: "/organizations/requests",
    tag: "Organization Management",
    summary: "Request a new organization (signed-in user without an org)",
    auth: "pending-user",
    body: Type.Object(
      { name: OrgName, type: Type.Optional(OrgType) },
      { additionalProperties: false },
    ),
    responses: {
      201: { description: "The pending request", schema: OrganizationRequestViewSchema },
      409: { description: "The signed-in person already has an organization or a pending request" },
    },
    handler: ({ deps, body, principal }) =>
      requestOrganization(deps, pendingCaller(principal), body),
  }),

  defineRoute({
    method: "get",
    path: "/organizations/requests",
    tag: "Organization Management",
    summary: "The caller's organization requests and their state",
    auth: "pending-user",
    list: "envelope",
    responses: {
      200: { description: "Own requests", schema: Type.Array(OrganizationRequestViewSchema) },
    },
    handler: ({ deps, principal }) => listOwnRequests(deps, pendingCaller(principal)),
  }),

  defineRoute({
    method: "get",
    path: "/admin/organizations/pending",
    tag: "Organization Management",
    summary: "Organization requests awaiting a decision",
    auth: "admin",
    list: "envelope",
    responses: {
      200: {
        description: "Pending requests, oldest first",
        schema: Type.Array(OrganizationRequestViewSchema),
      },
    },
    handler: ({ deps }) => listPendingRequests(deps),
  }),

  defineRoute({
    method: "post",
    path: "/admin/organizations/{id}/approve",
    tag: "Organization Management",
    summary:
      "Approve a request: the org becomes active with a trunk, an outbound route and a first extension",
    description: "The first extension's SIP password is in this answer only.",
    auth: "admin",
    params: IdParams,
    responses: {
      200: {
        description: "The active org and what was provisioned",
        schema: Type.Object({
          organization: OrganizationViewSchema,
          provisioned: Type.Object({
            trunk: Type.Object({ id: UuidString, name: Type.String(), host: Type.String() }),
            outbound_route: Type.Object({
              id: UuidString,
              name: Type.String(),
              patterns: Type.Array(Type.String()),
            }),
            extension: Type.Object({
              id: UuidString,
              extension: Type.String(),
              name: Type.String(),
              sip_username: Type.String(),
              sip_password: Type.String(),
            }),
          }),
        }),
      },
      409: { description: "The org is not a pending request" },
    },
    handler: ({ deps, params }) =>
      approveRequest(deps, params.id, { trunkHost: deps.config.defaultTrunkHost }),
  }),

  defineRoute({
    method: "post",
    path: "/admin/organizations/{id}/reject",
    tag: "Organization Management",
    summary: "Reject a request: the org stays inactive",
    auth: "admin",
    params: IdParams,
    responses: {
      200: { description: "The rejected request", schema: OrganizationRequestViewSchema },
      409: { description: "The org is not a pending request" },
    },
    handler: ({ deps, params }) => rejectRequest(deps, params.id),
  }),

  defineRoute({
    method: "put",
    path: "/admin/organizations/{id}",
    tag: "Organization Management",
    summary: "Update any organization, including its status (suspend or reactivate)",
    auth: "admin",
    params: IdParams,
    body: Type.Object(
      {
        name: Type.Optional(OrgName),
        slug: Type.Optional(OrgSlug),
        type: Type.Optional(OrgType),
        status: Type.Optional(
          Type.Union([Type.Literal("active"), Type.Literal("suspended"), Type.Literal("inactive")]),
        ),
        settings: Type.Optional(SettingsPatch),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: "The updated org", schema: OrganizationViewSchema },
      409: { description: "The change collides with the org state" },
    },
    handler: ({ deps, params, body }) => adminUpdateOrganization(deps, params.id, body),
  }),
];
