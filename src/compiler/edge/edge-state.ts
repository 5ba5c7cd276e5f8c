// What the Kamailio edge is compiled from (issue 26): the engine nodes, where each org lives, the
// numbers that reach each org and the addresses carriers send from. Built from the same OrgState
// the engine's files come from, plus placement (issue 25), so the store and YAML give one answer.
import { compareAscii } from "../../model/caller-id.js";
import type { OrgState } from "../../model/org-state.js";
import { didAliases } from "../../model/phone.js";
import { isGatewayDid } from "../../model/refs.js";

export type EdgeNodeState = "active" | "draining" | "down";

export interface EdgeNode {
  name: string;
  /** `host[:port]` the edge forwards the node's orgs' SIP traffic to. */
  sip_address: string;
  state: EdgeNodeState;
}

/** One org at the edge: the endpoint-name prefix it is found by, its node and standby, its DIDs. */
export interface EdgeOrg {
  org_id: string;
  /** Every phone's endpoint and auth username is `<context_prefix><extension>`. */
  context_prefix: string;
  primary: string;
  standby: string | null;
  /** Every alias a carrier may send each of its pool numbers as (`0…`, `91…`, `+91…`). */
  dids: string[];
}

/** Where the edge itself listens, and how it is driven and probes. */
export interface EdgeListen {
  /** The SIP address phones and carriers send to (UDP and TCP). */
  sip_address: string;
  sip_port: number;
  /** JSON-RPC over HTTP, loopback only: how pbxctl changes the tables at run time. */
  rpc_port: number;
  /** Directory the data files live in on the edge host (absolute). */
  data_dir: string;
  /** Seconds between the OPTIONS probes of each node. */
  probe_interval: number;
}

export interface EdgeState {
  listen: EdgeListen;
  nodes: EdgeNode[];
  orgs: EdgeOrg[];
  /** Addresses or CIDR ranges carriers (the gateway's and the trunks') send from. */
  carriers: string[];
}

/** An org's placement as the store or an `edge.yaml` gives it, by node name. */
export interface EdgePlacement {
  node: string;
  standby_node?: string | null;
}

/**
 * EdgeState from org files and placements: active orgs with a placement, each with the aliases of
 * the DID pool's numbers assigned to it and active (`isGatewayDid`), the numbers the node's
 * gateway dispatches. An org's own numbers (`source: own`) are left out: the gateway never routes
 * them (they reach the org over its own trunk, registered at its node), so a carrier's call to
 * one through the edge would only reach a node that refuses it, and the edge would be routing a
 * number the platform never vetted. Carriers come from `gatewayCarriers` plus every trunk's
 * identify matches. Orgs and carriers are sorted, so the same input in any order compiles to the
 * same files.
 */
export function edgeStateFromOrgs(
  orgs: readonly OrgState[],
  placements: ReadonlyMap<string, EdgePlacement>,
  nodes: readonly EdgeNode[],
  listen: EdgeListen,
  gatewayCarriers: readonly string[] = [],
): EdgeState {
  const edgeOrgs: EdgeOrg[] = [];
  const carriers = new Set(gatewayCarriers);
  for (const state of orgs) {
    if (state.org.status !== "active") continue;
    for (const trunk of state.trunks) for (const match of trunk.match) carriers.add(match);
    const placement = placements.get(state.org.id);
    if (!placement) continue;
    const dids = state.dids
      .filter(isGatewayDid)
      .flatMap((did) => didAliases(did.number))
      .sort(compareAscii);
    edgeOrgs.push({
      org_id: state.org.id,
      context_prefix: state.org.context_prefix,
      primary: placement.node,
      standby: placement.standby_node ?? null,
      dids: [...new Set(dids)],
    });
  }
  return {
    listen,
    nodes: [...nodes].sort((a, b) => compareAscii(a.name, b.name)),
    orgs: edgeOrgs.sort((a, b) => compareAscii(a.context_prefix, b.context_prefix)),
    carriers: [...carriers].sort(compareAscii),
  };
}
