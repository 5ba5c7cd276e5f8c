// Configuration management (SPEC.md §4.2): deploy, reload and status of the caller's org, and the
// admin's gateway regeneration. Handlers are thin; src/domain/config/config-deploy.ts has the rules.
import { Type } from "@sinclair/typebox";
import {
  deployOwnConfig,
  ownConfigStatus,
  regenerateGateway,
  reloadOwnConfig,
} from "../../domain/config/config-deploy.js";
import {
  ConfigReloadViewSchema,
  StatusViewSchema as ConfigStatus,
  DeployViewSchema as DeployResult,
} from "../../model/deploy-views.js";
import { orgCaller } from "../principals.js";
import { defineRoute } from "../registry.js";

export const configRoutes = [
  defineRoute({
    method: "post",
    path: "/config/deploy",
    tag: "Configuration Management",
    summary: "Compile the caller's org from the store and deploy it now (admin or owner role)",
    description:
      "Not debounced. Only files whose content changed are written and only the engine modules " +
      "they belong to are reloaded; an unchanged org answers `result: unchanged`. A failed " +
      "deploy answers 502 with the reason; the configuration stays saved. With realtime PJSIP, " +
      "rows that could not be written or changes the engine has not taken fail the deploy too.",
    auth: "org",
    permission: "config.deploy",
    responses: {
      200: { description: "What the deploy changed", schema: DeployResult },
      409: { description: "The org's configuration does not compile" },
      502: { description: "Writing or reloading failed" },
      503: { description: "Engine deploys are not configured on this server" },
    },
    handler: ({ deps, principal }) => deployOwnConfig(deps, orgCaller(principal)),
  }),

  defineRoute({
    method: "post",
    path: "/config/reload",
    tag: "Configuration Management",
    summary: "Reload the engine modules of the caller's org (admin or owner role)",
    description:
      "Reloads the modules the org's deployed files belong to (PJSIP, dialplan, its queues by " +
      "name, voicemail), one at a time with every other reload of the engine.",
    auth: "org",
    permission: "config.deploy",
    responses: {
      200: {
        description: "The reloads run",
        schema: ConfigReloadViewSchema,
      },
      502: { description: "A reload failed" },
      503: { description: "Engine deploys are not configured on this server" },
    },
    handler: ({ deps, principal }) => reloadOwnConfig(deps, orgCaller(principal)),
  }),

  defineRoute({
    method: "get",
    path: "/config/status",
    tag: "Configuration Management",
    summary: "What is live: desired revision beside applied revision, and the last deploys",
    auth: "org",
    query: Type.Object(
      { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })) },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: "Deploy status of the org", schema: ConfigStatus },
      503: { description: "Engine deploys are not configured on this server" },
    },
    handler: ({ deps, principal, query }) =>
      ownConfigStatus(deps, orgCaller(principal), { limit: query.limit ?? 10 }),
  }),

  defineRoute({
    method: "post",
    path: "/admin/regenerate-gateway",
    tag: "Configuration Management",
    summary: "Regenerate and deploy the inbound gateway dispatcher (admin JWT or X-Internal-Key)",
    description:
      "Rebuilds the dispatcher from every assigned, active DID of every active org. Calls are " +
      "serialized: a second call waits for the first one's reload.",
    auth: ["admin", "internal"],
    responses: {
      200: {
        description: "The gateway is deployed",
        schema: Type.Object({
          success: Type.Literal(true),
          didCount: Type.Integer(),
          orgCount: Type.Integer(),
        }),
      },
      502: { description: "Writing or reloading failed" },
      503: { description: "Engine deploys are not configured on this server" },
    },
    handler: ({ deps }) => regenerateGateway(deps),
  }),
];
