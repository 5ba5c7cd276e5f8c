// Placement (issue 25, docs/nodes.md): which engine node each org lives on. With no node defined
// there is no placement at all and every org runs on the one implicit engine (PBX_AMI_*), as
// before nodes existed. Once a node exists, every org has exactly one primary node (optionally a
// standby): a new org goes to the least-loaded active node with room, in the transaction that
// creates it, after the node rows are locked (engine-node-repository.ts), so replicas creating
// orgs at once never overfill a node. An admin may pin an org to a node of their choice.

import type { PlacementView } from "../../model/node-views.js";
import type { EngineNodeRecord, OrgPlacementRecord } from "../../model/stored-records.js";
import type { Db } from "../../store/database.js";
import {
  findEngineNode,
  findPlacement,
  listEngineNodes,
  listPlacements,
  lockNodesForPlacement,
  type NodeLoad,
  nodeLoads,
  savePlacement,
} from "../../store/engine-node-repository.js";
import { findOrgMove } from "../../store/org-move-repository.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";
import { findNodeRow } from "./engine-node-lookup.js";

/** 409 when every active node is full (or no node is active): the platform needs a node. */
export const NO_NODE_WITH_ROOM = "No active engine node has room for another organization";

/** Where an org lives, as admins see it (never shown to the org itself). */
export type { PlacementView } from "../../model/node-views.js";

/**
 * The places of a node's capacity taken: its primaries and the orgs of unfinished moves it holds
 * besides (node-side of a move: engine-node-repository.ts `NodeLoad.moving`). Every capacity
 * decision counts this, so a move and a placement racing each other never over-fill a node.
 */
export function occupied(load: NodeLoad | undefined): number {
  return (load?.primaries ?? 0) + (load?.moving ?? 0);
}

/** Fill of a node: the share of its capacity taken. */
function fill(node: EngineNodeRecord, load: NodeLoad | undefined): number {
  return occupied(load) / node.capacity;
}

/**
 * The node a new org goes to: among active nodes with room, the one with the smallest share of
 * its capacity taken (so nodes of different sizes fill evenly), then the fewest orgs, then by
 * name; undefined when none has room.
 */
export function leastLoadedNode(
  nodes: readonly EngineNodeRecord[],
  loads: ReadonlyMap<string, NodeLoad>,
): EngineNodeRecord | undefined {
  const open = nodes.filter((n) => n.state === "active" && occupied(loads.get(n.id)) < n.capacity);
  open.sort(
    (a, b) =>
      fill(a, loads.get(a.id)) - fill(b, loads.get(b.id)) ||
      occupied(loads.get(a.id)) - occupied(loads.get(b.id)) ||
      a.name.localeCompare(b.name),
  );
  return open[0];
}

/**
 * Places a just-created org (call inside the transaction that inserts it). Null when no node
 * is defined: the org runs on the implicit engine. 409 `NO_NODE_WITH_ROOM` otherwise when no
 * active node has room, which rolls the org's creation back.
 */
export async function placeNewOrg(
  trx: Db,
  orgId: string,
  now: string,
): Promise<OrgPlacementRecord | null> {
  await lockNodesForPlacement(trx);
  const nodes = await listEngineNodes(trx);
  if (nodes.length === 0) return null;
  const node = leastLoadedNode(nodes, await nodeLoads(trx));
  if (!node) throw new Conflict(NO_NODE_WITH_ROOM);
  const row = { org_id: orgId, node_id: node.id, standby_node_id: null, pinned: 0, placed_at: now };
  await savePlacement(trx, row);
  return row;
}

/** The admin view of a placement row. */
export async function placementView(db: Db, row: OrgPlacementRecord): Promise<PlacementView> {
  const names = new Map((await listEngineNodes(db)).map((n) => [n.id, n.name]));
  return placementViewFrom(row, names);
}

/** `placementView` with the node names already at hand (listings). */
export function placementViewFrom(
  row: OrgPlacementRecord,
  nodeNames: ReadonlyMap<string, string>,
): PlacementView {
  return {
    node: nodeNames.get(row.node_id) ?? row.node_id,
    node_id: row.node_id,
    standby_node: row.standby_node_id ? (nodeNames.get(row.standby_node_id) ?? null) : null,
    standby_node_id: row.standby_node_id,
    pinned: row.pinned === 1,
    placed_at: row.placed_at,
  };
}

/** Every org's placement for admins, by org id (empty when no node is defined). */
export async function placementsByOrg(db: Db): Promise<Map<string, PlacementView>> {
  const names = new Map((await listEngineNodes(db)).map((n) => [n.id, n.name]));
  const rows = names.size === 0 ? [] : await listPlacements(db);
  return new Map(rows.map((row) => [row.org_id, placementViewFrom(row, names)]));
}

/** An org's placement for admins; null when no node is defined (the implicit engine). */
export async function getPlacement(db: Db, orgId: string): Promise<PlacementView | null> {
  if (!(await createOrganizationRepository(db).findById(orgId))) {
    throw new NotFound("Organization not found");
  }
  const row = await findPlacement(db, orgId);
  return row ? placementView(db, row) : null;
}

export interface PinInput {
  /** Node id or name. */
  node: string;
  /** Node id or name; null clears the standby; absent keeps it. */
  standby_node?: string | null;
}

/**
 * Why a node cannot take an org it does not hold yet, or null when it can (the orgs of unfinished
 * moves through it counted as its own: `occupied`).
 */
export function refusal(node: EngineNodeRecord, load: NodeLoad | undefined): string | null {
  if (node.state !== "active") {
    return `Engine node '${node.name}' is ${node.state}: it takes no new organization`;
  }
  if (occupied(load) >= node.capacity) {
    return `Engine node '${node.name}' is full (${node.capacity} organizations)`;
  }
  return null;
}

/**
 * 409 while the org's move is unfinished: its driver switches the placement itself
 * (org-move-driver.ts), so a pin meanwhile would either be overwritten by the switch or, after
 * it, send the org back to the node the move is removing it from. Read after the node lock, which
 * `moveOrg` takes too: a pin and a move of one org never pass each other.
 */
async function refuseDuringMove(trx: Db, orgId: string): Promise<void> {
  const move = await findOrgMove(trx, orgId);
  if (!move || move.finished_at !== null) return;
  const target = (await findEngineNode(trx, move.target_node_id))?.name ?? move.target_node_id;
  throw new Conflict(
    `Organization is being moved to engine node '${target}' (move ${move.id}, phase ${move.phase}): wait until the move is done, then pin it`,
  );
}

/**
 * Pins an org to a node (admin): the node must be active with room unless it already holds the
 * org; the standby must be another node, and not `down`; an org whose move is under way is not
 * pinned at all (409 naming the move). Records where the org is to live: the deploys follow the
 * store (moving a live org's config between engines is `org move`).
 */
export async function pinOrg(
  db: Db,
  orgId: string,
  input: PinInput,
  now: string,
): Promise<PlacementView> {
  return db.transaction().execute(async (trx) => {
    if (!(await createOrganizationRepository(trx).findById(orgId))) {
      throw new NotFound("Organization not found");
    }
    await lockNodesForPlacement(trx);
    await refuseDuringMove(trx, orgId);
    const node = await findNodeRow(trx, input.node);
    const current = await findPlacement(trx, orgId);
    if (current?.node_id !== node.id) {
      const why = refusal(node, (await nodeLoads(trx)).get(node.id));
      if (why) throw new Conflict(why);
    }
    let standbyId = current?.standby_node_id ?? null;
    if (input.standby_node !== undefined) {
      standbyId =
        input.standby_node === null ? null : (await findNodeRow(trx, input.standby_node)).id;
    }
    if (standbyId === node.id) {
      throw new BadRequest("standby_node must be another node than the primary node");
    }
    if (standbyId && standbyId !== current?.standby_node_id) {
      const standby = await findEngineNode(trx, standbyId);
      if (standby?.state === "down") {
        throw new Conflict(`Engine node '${standby.name}' is down: it cannot be a standby`);
      }
    }
    const row = {
      org_id: orgId,
      node_id: node.id,
      standby_node_id: standbyId,
      pinned: 1,
      placed_at: current?.node_id === node.id ? current.placed_at : now,
    };
    await savePlacement(trx, row);
    return placementView(trx, row);
  });
}
