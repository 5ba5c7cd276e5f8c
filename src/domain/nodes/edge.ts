// The SIP edge's input from the store (issue 26): engine nodes, every org's placement by node
// name, and the org states the DIDs and carriers' addresses come from. The edge compiler turns it
// into kamailio.cfg and its tables (src/compiler/edge).
import { type EdgeListen, type EdgeState, edgeStateFromOrgs } from "../../compiler/edge/index.js";
import { loadEdgeRouting } from "../../deploy/edge-routing.js";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createOrganizationRepository, isServed } from "../../store/organization-repository.js";

/**
 * EdgeState of everything the store holds. With no engine node defined there is nothing to route
 * to: the nodes list is empty and every request gets the edge's clean 404.
 */
export async function edgeStateFromStore(
  db: Db,
  listen: EdgeListen,
  gatewayCarriers: readonly string[],
): Promise<EdgeState> {
  const { nodes, placements } = await loadEdgeRouting(db);
  const states = [];
  for (const org of await createOrganizationRepository(db).listHandles()) {
    if (isServed(org.status)) states.push(await loadOrgState(db, org.id));
  }
  return edgeStateFromOrgs(states, placements, nodes, listen, gatewayCarriers);
}
