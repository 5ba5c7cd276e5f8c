// Granular per-org API keys (`/api-keys`).
import { Type } from "@sinclair/typebox";
import {
  createApiKey,
  getApiKey,
  listApiKeys,
  revokeApiKey,
} from "../../domain/access/api-keys.js";
import { ApiKeyPermissionSchema, ApiKeyViewSchema } from "../../model/access-views.js";
import { ONE_LINE } from "../../model/org-state.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams } from "../schemas.js";

export const apiKeyRoutes = [
  defineRoute({
    method: "get",
    path: "/api-keys",
    tag: "API Keys",
    summary: "List the org's API keys (never their secrets)",
    auth: "org",
    permission: "api_keys.manage",
    list: "envelope",
    responses: { 200: { description: "Keys, oldest first", schema: Type.Array(ApiKeyViewSchema) } },
    handler: ({ deps, principal }) => listApiKeys(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/api-keys",
    tag: "API Keys",
    summary: "Create an API key; `api_key` (ak_) and `api_secret` (as_) are shown once",
    description:
      "The key alone authenticates (`X-API-Key`). It may call `calls.*` and `crm.*` operations only with the matching permission.",
    auth: "org",
    permission: "api_keys.manage",
    body: Type.Object(
      {
        name: Type.String({
          minLength: 1,
          maxLength: 100,
          pattern: ONE_LINE,
        }),
        permissions: Type.Optional(
          Type.Array(ApiKeyPermissionSchema, {
            uniqueItems: true,
            default: [],
            description: "`calls.*`/`crm.*` operations this key may call; none when omitted",
          }),
        ),
      },
      { additionalProperties: false },
    ),
    responses: {
      201: {
        description: "The key with its credentials",
        schema: Type.Composite([
          ApiKeyViewSchema,
          Type.Object({ api_key: Type.String(), api_secret: Type.String() }),
        ]),
      },
    },
    handler: ({ deps, body, principal }) =>
      createApiKey(deps, orgCaller(principal).orgId, {
        name: body.name,
        permissions: body.permissions ?? [],
      }),
  }),

  defineRoute({
    method: "get",
    path: "/api-keys/{id}",
    tag: "API Keys",
    summary: "One API key",
    auth: "org",
    permission: "api_keys.manage",
    params: IdParams,
    responses: { 200: { description: "The key", schema: ApiKeyViewSchema } },
    handler: ({ deps, params, principal }) =>
      getApiKey(deps, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "delete",
    path: "/api-keys/{id}",
    tag: "API Keys",
    summary: "Revoke an API key (stops working on the next request)",
    auth: "org",
    permission: "api_keys.manage",
    params: IdParams,
    responses: { 204: { description: "Revoked" } },
    handler: async ({ deps, params, principal }) => {
      await revokeApiKey(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),

  defineRoute({
    method: "post",
    path: "/api-keys/{id}/revoke",
    tag: "API Keys",
    summary: "Revoke an API key (same as DELETE)",
    auth: "org",
    permission: "api_keys.manage",
    params: IdParams,
    responses: { 200: { description: "The revoked key", schema: ApiKeyViewSchema } },
    handler: ({ deps, params, principal }) =>
      revokeApiKey(deps, orgCaller(principal).orgId, params.id),
  }),
];
