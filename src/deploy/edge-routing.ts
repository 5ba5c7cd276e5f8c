// The store's engine nodes and placements as the edge compiler takes them (by node name), shared
// by `pbxctl edge init|apply` (src/domain/nodes/edge.ts) and the server's edge sync (edge-sync.ts).
import type { EdgeNode, EdgePlacement } from "../compiler/edge/index.js";
import type { Db } from "../store/database.js";
import { listEngineNodes, listPlacements } from "../store/engine-node-repository.js";

export interface EdgeRouting {
  nodes: EdgeNode[];
  /** By org id; an org placed on a node that no longer exists has none. */
  placements: Map<string, EdgePlacement>;
}

export async function loadEdgeRouting(db: Db): Promise<EdgeRouting> {
  const rows = await listEngineNodes(db);
  const nodeNames = new Map(rows.map((node) => [node.id, node.name]));
  const placements = new Map<string, EdgePlacement>();
  for (const placement of await listPlacements(db)) {
    const node = nodeNames.get(placement.node_id);
    if (node === undefined) continue;
    const standby = placement.standby_node_id ? nodeNames.get(placement.standby_node_id) : null;
    placements.set(placement.org_id, { node, standby_node: standby ?? null });
  }
  const nodes = rows.map((node) => ({
    name: node.name,
    sip_address: node.sip_address,
    state: node.state,
  }));
  return { nodes, placements };
}
