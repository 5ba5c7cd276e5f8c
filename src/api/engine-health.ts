// `/health`'s `engine` while engine nodes are defined. `/health` answers whoever can reach the
// server, without authentication, so it says how many nodes' AMI connections are down, never
// which: node names say where tenants run and are for admins (`pbxctl status` groups units by
// node; `GET /admin/engine-nodes`).

/** `connected` when every node's AMI is, else `disconnected: <down> of <all> nodes`. */
export function nodesEngineHealth(states: readonly string[]): string {
  const down = states.filter((state) => state === "disconnected").length;
  return down === 0 ? "connected" : `disconnected: ${down} of ${states.length} nodes`;
}
