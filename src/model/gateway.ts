// The inbound gateway's view of all orgs: which DIDs this deployment dispatches to which org.
import { compareAscii } from "./caller-id.js";
import type { GatewayOrg, GatewayState, OrgState, RoutingEnvironment } from "./org-state.js";
import { internationalDigits } from "./phone.js";
import { isUsableDid } from "./refs.js";

/** The deployment the gateway file is compiled for. */
export interface GatewayOptions {
  environment: RoutingEnvironment;
  staging_endpoint: string;
}

/**
 * GatewayState of these orgs: the assigned, active DIDs of every active org (orgs without such a
 * DID are left out), orgs sorted by context prefix and DIDs by international digits, so the
 * same orgs in any order give the same state.
 */
export function gatewayStateFromOrgs(
  orgs: readonly OrgState[],
  options: GatewayOptions,
): GatewayState {
  const gatewayOrgs: GatewayOrg[] = orgs
    .filter((state) => state.org.status === "active")
    .map((state) => ({
      org_id: state.org.id,
      context_prefix: state.org.context_prefix,
      dids: state.dids
        .filter(isUsableDid)
        .map((did) => ({ number: did.number, routing_environment: did.routing_environment }))
        .sort(
          (a, b) =>
            compareAscii(internationalDigits(a.number), internationalDigits(b.number)) ||
            compareAscii(a.number, b.number),
        ),
    }))
    .filter((org) => org.dids.length > 0)
    .sort((a, b) => compareAscii(a.context_prefix, b.context_prefix));
  return {
    environment: options.environment,
    staging_endpoint: options.staging_endpoint,
    orgs: gatewayOrgs,
  };
}
