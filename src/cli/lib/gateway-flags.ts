// The gateway flags of the commands that compile (compile, plan, deploy), apart from the other
// shared flags because they read the model's schemas, which `validate` does not load.
import { Flags } from "@oclif/core";
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

/** The gateway options gatewayFlags describe. */
export function gatewayOf(flags: {
  environment: (typeof ROUTING_ENVIRONMENTS)[number];
  "staging-endpoint": string;
}): GatewayOptions {
  return { environment: flags.environment, staging_endpoint: flags["staging-endpoint"] };
}
