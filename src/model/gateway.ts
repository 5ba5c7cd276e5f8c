// The inbound gateway's view of all orgs: which DIDs this deployment dispatches to which org.
import { compareAscii } from "./caller-id.js";
import type {
  GatewayOrg,
  GatewayState,
  OrgState,
  RoutingEnvironment,
  StagingTunnel,
} from "./org-state.js";
import { internationalDigits } from "./phone.js";
import { isGatewayDid } from "./refs.js";

/** The deployment the gateway file is compiled for. */
export interface GatewayOptions {
  environment: RoutingEnvironment;
  staging_endpoint: string;
  /** Orgs whose staging DIDs go over their own customer tunnel, by org id. */
  staging_tunnels?: Readonly<Record<string, StagingTunnel>>;
}

/** What the gateway needs of one org: its usable pool DIDs, or null when it routes nothing there. */
export function gatewayOrgOf(state: OrgState): GatewayOrg | null {
  if (state.org.status !== "active") return null;
  const dids = state.dids
    .filter(isGatewayDid)
    .map((did) => ({ number: did.number, routing_environment: did.routing_environment }))
    .sort(
      (a, b) =>
        compareAscii(internationalDigits(a.number), internationalDigits(b.number)) ||
        compareAscii(a.number, b.number),
    );
  return dids.length > 0
    ? { org_id: state.org.id, context_prefix: state.org.context_prefix, dids }
    : null;
}

/** GatewayState of orgs already reduced by `gatewayOrgOf`, sorted by context prefix. */
export function gatewayStateOf(
  gatewayOrgs: readonly GatewayOrg[],
  options: GatewayOptions,
): GatewayState {
  return {
    environment: options.environment,
    staging_endpoint: options.staging_endpoint,
    orgs: [...gatewayOrgs]
      .map((org) => {
        const tunnel = options.staging_tunnels?.[org.org_id];
        return tunnel ? { ...org, staging_tunnel: tunnel } : org;
      })
      .sort((a, b) => compareAscii(a.context_prefix, b.context_prefix)),
  };
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
  const gatewayOrgs: GatewayOrg[] = [];
  for (const state of orgs) {
    const gatewayOrg = gatewayOrgOf(state);
    if (gatewayOrg) gatewayOrgs.push(gatewayOrg);
  }
  return gatewayStateOf(gatewayOrgs, options);
}
