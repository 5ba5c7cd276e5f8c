// Flags several commands share, declared once.
import { Args, Flags } from "@oclif/core";
import type { GatewayOptions } from "../../model/gateway.js";
import { GatewayStateSchema, ROUTING_ENVIRONMENTS } from "../../model/org-state.js";

const STAGING_ENDPOINT = new RegExp(GatewayStateSchema.properties.staging_endpoint.pattern ?? "");

/** The deployment the gateway file is compiled for. */
export const gatewayFlags = {
  environment: Flags.option({
    options: ROUTING_ENVIRONMENTS,
    default: "prod" as const,
    env: "PBX_ENVIRONMENT",
    summary: "Deployment this engine is: its DIDs are answered here, staging DIDs are forwarded.",
  })(),
  "staging-endpoint": Flags.string({
    default: "staging-tunnel",
    env: "PBX_STAGING_ENDPOINT",
    summary: "PJSIP endpoint of the tunnel to the staging deployment.",
    parse: async (value) => {
      if (!STAGING_ENDPOINT.test(value)) {
        throw new Error(`--staging-endpoint must be letters, digits, _ or - (got ${value})`);
      }
      return value;
    },
  }),
};

/** Where the top-level files include org files from (compile and plan). */
export const includeRootFlag = {
  "include-root": Flags.string({
    summary: "Directory the top-level files #include org files from (default: relative paths).",
    description:
      "Asterisk resolves relative #include paths against its own config directory, so a tree " +
      "deployed anywhere else must be included by absolute path.",
  }),
};

/** The gateway options gatewayFlags describe. */
export function gatewayOf(flags: {
  environment: (typeof ROUTING_ENVIRONMENTS)[number];
  "staging-endpoint": string;
}): GatewayOptions {
  return { environment: flags.environment, staging_endpoint: flags["staging-endpoint"] };
}

/** The variadic org file/directory argument (commands using it set `strict = false`). */
export const orgPathsArgs = {
  paths: Args.string({
    required: true,
    description: "Org files (*.yaml) or directories of them; several may be given.",
  }),
};
