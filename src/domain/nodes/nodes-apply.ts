// `pbxctl apply --nodes nodes.yaml`: the store brought to the nodes file's nodes and placements,
// as org files bring it to their orgs. What the file says and the store can take from it:
// - a node's `sip_address` and `state` (updated when they differ). A node the file names must
//   already be in the store: its AMI credentials are not in the file (`pbxctl nodes add` first);
//   nodes the file leaves out are left alone (removing one is `pbxctl nodes remove`);
// - each placement (primary and standby, pinned when it differs), with the pinning rules of the
//   admin API (a draining or full node takes no new org: 409 as there).
// The file's `edge` part and carriers are the edge's own (`edge init`, PBX_EDGE_*): not store state.
// Every write goes through the engine-node and placement use cases, so each records the edge
// request `serve` pushes (docs/beyond-one-machine.md "The server keeps the edge in step").
import type { NodeState } from "../../model/engine-node.js";
import type { NodesFile } from "../../model/nodes-file.js";
import { BadRequest, NotFound } from "../errors.js";
import {
  type EngineNodeView,
  listEngineNodes,
  type NodeDeps,
  updateEngineNode,
} from "./engine-nodes.js";
import { getPlacement, pinOrg } from "./placement.js";

/** One change the nodes file asks of the store. */
export type NodesChange =
  | { kind: "node"; node: string; fields: { sip_address?: string; state?: NodeState } }
  | { kind: "placement"; org_id: string; node: string; standby_node: string | null };

/** The store's nodes by name; throws BadRequest for a node of `file` the store does not have. */
export async function storedNodesOf(
  deps: Pick<NodeDeps, "db">,
  file: NodesFile,
): Promise<Map<string, EngineNodeView>> {
  const stored = new Map((await listEngineNodes(deps)).map((node) => [node.name, node]));
  for (const node of file.nodes) {
    if (!stored.has(node.name)) {
      throw new BadRequest(
        `engine node '${node.name}' is not in the store: add it with \`pbxctl nodes add\` (its AMI credentials are not in the nodes file)`,
      );
    }
  }
  return stored;
}

/**
 * What the store needs to match `file` (nothing written). An org the store does not have yet
 * counts as unplaced (apply creates org files' orgs before it pins); pinning one that is in no
 * org file either is refused then, naming it.
 */
export async function planNodesFile(
  deps: Pick<NodeDeps, "db">,
  file: NodesFile,
): Promise<NodesChange[]> {
  const stored = await storedNodesOf(deps, file);
  const changes: NodesChange[] = [];
  for (const node of file.nodes) {
    const current = stored.get(node.name)!;
    const fields: { sip_address?: string; state?: NodeState } = {};
    if (current.sip_address !== node.sip_address) fields.sip_address = node.sip_address;
    if (current.state !== node.state) fields.state = node.state;
    if (Object.keys(fields).length > 0) changes.push({ kind: "node", node: node.name, fields });
  }
  for (const [orgId, wanted] of Object.entries(file.placements).sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    const standby = wanted.standby_node ?? null;
    const current = await getPlacement(deps.db, orgId).catch((error: unknown) => {
      if (error instanceof NotFound) return null;
      throw error;
    });
    if (current?.node === wanted.node && current.standby_node === standby) continue;
    changes.push({ kind: "placement", org_id: orgId, node: wanted.node, standby_node: standby });
  }
  return changes;
}

/** Writes `changes` (nodes first: a placement may name a node the file just made active). */
export async function applyNodesChanges(
  deps: NodeDeps,
  changes: readonly NodesChange[],
): Promise<void> {
  for (const change of changes) {
    if (change.kind === "node") {
      await updateEngineNode(deps, change.node, change.fields);
    }
  }
  for (const change of changes) {
    if (change.kind === "placement") {
      await pinOrg(
        deps.db,
        change.org_id,
        { node: change.node, standby_node: change.standby_node },
        deps.clock().toISOString(),
      ).catch((error: unknown) => {
        if (error instanceof NotFound) {
          throw new BadRequest(`placement of ${change.org_id}: no such organization`);
        }
        throw error;
      });
    }
  }
}
