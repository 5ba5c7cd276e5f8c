// What `org move` needs of the engines in `serve` (src/domain/org-move-driver.ts): deploys through
// each node's deployer (NodeRuntimes), the org's live calls and the AMI connection of each node's
// events (NodeCallTracking), and whether a SIP edge routes the phones.

import type { NodeRuntimes } from "../deploy/node-runtime.js";
import type { MoveEngines } from "../domain/nodes/org-move-driver.js";
import { notifyCheckSync } from "../engine/endpoint-notify.js";
import type { NodeCallTracking } from "./node-call-tracking.js";

export function orgMoveEngines(
  nodes: NodeRuntimes,
  nodeCalls: NodeCallTracking,
  edge: boolean,
): MoveEngines {
  return {
    edge,
    deployOn: (nodeId, orgId) => nodes.deployOn(nodeId, orgId),
    callsOn(nodeId, orgId) {
      const tracking = nodeCalls.trackingOf(nodeId);
      // Not followed: the node is down or gone, and its calls with it.
      if (!tracking) return 0;
      if (!tracking.live.tracking) return null;
      return tracking.live.callsOf(orgId).length;
    },
    async notifyReregister(nodeId, endpoints) {
      const connection = nodeCalls.trackingOf(nodeId)?.connection;
      if (!connection) return 0;
      let sent = 0;
      for (const endpoint of endpoints) {
        if (await notifyCheckSync(connection, endpoint)) sent++;
      }
      return sent;
    },
  };
}
