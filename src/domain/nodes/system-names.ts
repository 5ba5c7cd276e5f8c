// One `systemname` per engine node (issue 25, docs/nodes.md "Every node needs its own
// systemname"). Asterisk numbers channels `<epoch>.<n>` per process, so two nodes hand out the
// same unique ids unless each prefixes them with a systemname of its own; the call store keeps
// one record per unique id (the ingest's replay rule), so the second node's calls would be
// dropped as replays, or worse, merged into another node's call. What each node's Asterisk
// answered to `CoreSettings` at its last AMI connect is recorded (src/api/node-call-tracking.ts);
// this is the rule that judges the answers. Pure.

/** A node and its systemname as last seen (`null`: never reached yet, so not judged). */
export interface NodeSystemName {
  id: string;
  name: string;
  systemName: string | null;
}

const FIX =
  "set `systemname` in its asterisk.conf [options] (pbxctl engine init --system-name <name>) and restart it; its call events are not stored until then";

/**
 * The problem of each node whose systemname would let its unique ids collide with another
 * node's, by node id: none at all while several nodes are defined, or the same as another
 * node's. A single node needs none (nothing to collide with: the quick start is unchanged).
 */
export function systemNameProblems(nodes: readonly NodeSystemName[]): Map<string, string> {
  const problems = new Map<string, string>();
  const byName = new Map<string, NodeSystemName[]>();
  for (const node of nodes) {
    if (node.systemName === null) continue;
    if (node.systemName === "") {
      if (nodes.length > 1) {
        problems.set(
          node.id,
          `Asterisk on engine node '${node.name}' has no systemname, so its call ids collide with the other nodes': ${FIX}`,
        );
      }
      continue;
    }
    byName.set(node.systemName, [...(byName.get(node.systemName) ?? []), node]);
  }
  for (const [systemName, sharing] of byName) {
    if (sharing.length < 2) continue;
    for (const node of sharing) {
      const others = sharing
        .filter((other) => other !== node)
        .map((other) => `'${other.name}'`)
        .join(", ");
      problems.set(
        node.id,
        `Asterisk on engine node '${node.name}' has the systemname '${systemName}' of engine node ${others}, so their call ids collide: ${FIX}`,
      );
    }
  }
  return problems;
}
