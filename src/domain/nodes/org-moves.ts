// `org move` (issue 25, docs/nodes.md "Moving an org"): an admin asks for an org to move to
// another engine node; the request is recorded as a move in the store (migration 3000) and
// carried out by the holder of the `org-moves` lease (org-move-driver.ts): deploy on the target,
// switch the placement (and the edge), make the org's phones re-register, wait until the source
// has no call of the org left (bounded), remove the org from the source. `moveOrg` is the one use
// case the API route, the CLI and the engine suites call.
import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.js";
import type { OrgMoveView } from "../../model/node-views.js";
import type { OrgMoveRecord } from "../../model/stored-records.js";
import type { Db } from "../../store/database.js";
import {
  findEngineNode,
  findPlacement,
  lockNodesForPlacement,
  nodeLoads,
} from "../../store/engine-node-repository.js";
import { findOrgMove, saveOrgMove } from "../../store/org-move-repository.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import { Conflict, NotFound } from "../errors.js";
import { findNodeRow } from "./engine-node-lookup.js";
import { refusal } from "./placement.js";

/** How long a move waits for the org's calls on the source to end, unless told (1 hour). */
export const DEFAULT_CALL_DRAIN_TIMEOUT_S = 3600;
/** The longest wait a move may be given (1 day). */
export const MAX_CALL_DRAIN_TIMEOUT_S = 86_400;

export const ORG_NOT_FOUND = "Organization not found";
export const NO_MOVE = "This organization has not been moved";

export interface MoveDeps {
  db: Db;
  clock: Clock;
}

export interface MoveInput {
  /** The target node's name or id. */
  to: string;
  /** How long to wait for the org's calls on the source to end (1..86400 s; default 3600). */
  call_drain_timeout_seconds?: number;
}

/** A move as admins see it (`Static<>` of its response schema). */
export type { OrgMoveView } from "../../model/node-views.js";

/** When the drain of a move started at `startedAt` gives up waiting. */
export function drainDeadline(row: Pick<OrgMoveRecord, "call_drain_timeout_s">, startedAt: string) {
  return new Date(Date.parse(startedAt) + row.call_drain_timeout_s * 1000).toISOString();
}

/** A node's name, for what admins read; its id when the node is gone. */
export async function nodeName(db: Db, nodeId: string): Promise<string> {
  return (await findEngineNode(db, nodeId))?.name ?? nodeId;
}

export async function orgMoveView(db: Db, row: OrgMoveRecord): Promise<OrgMoveView> {
  return {
    id: row.id,
    org_id: row.org_id,
    from_node: await nodeName(db, row.source_node_id),
    to_node: await nodeName(db, row.target_node_id),
    phase: row.phase,
    call_drain_timeout_seconds: row.call_drain_timeout_s,
    requested_at: row.requested_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
    phones_notified: row.phones_notified,
    drain: row.drain_started_at
      ? {
          started_at: row.drain_started_at,
          deadline: drainDeadline(row, row.drain_started_at),
          calls: row.drain_calls,
          timed_out: row.drain_timed_out === 1,
        }
      : null,
    last_error: row.last_error,
  };
}

/**
 * Asks for the org to move to node `input.to` (admin): 404 for an unknown org or node; 409 when
 * the org already is on that node, is being moved, has no placement (no node defined), or the
 * node is draining, down or full (the unfinished moves through it counted). The move is recorded
 * and carried out in the background; the answer is its first state.
 */
export async function moveOrg(
  deps: MoveDeps,
  orgId: string,
  input: MoveInput,
): Promise<OrgMoveView> {
  return deps.db.transaction().execute(async (trx) => {
    if (!(await createOrganizationRepository(trx).findById(orgId))) {
      throw new NotFound(ORG_NOT_FOUND);
    }
    await lockNodesForPlacement(trx);
    const target = await findNodeRow(trx, input.to);
    const placement = await findPlacement(trx, orgId);
    if (!placement) throw new Conflict("Organization is not placed on any engine node");
    const current = await findOrgMove(trx, orgId);
    if (current && current.finished_at === null) {
      throw new Conflict(
        `Organization is already being moved to engine node '${await nodeName(trx, current.target_node_id)}'`,
      );
    }
    if (placement.node_id === target.id) {
      throw new Conflict(`Organization is already on engine node '${target.name}'`);
    }
    const why = refusal(target, (await nodeLoads(trx)).get(target.id));
    if (why) throw new Conflict(why);
    const now = deps.clock().toISOString();
    const row: OrgMoveRecord = {
      org_id: orgId,
      id: randomUUID(),
      source_node_id: placement.node_id,
      target_node_id: target.id,
      phase: "deploying",
      call_drain_timeout_s: input.call_drain_timeout_seconds ?? DEFAULT_CALL_DRAIN_TIMEOUT_S,
      requested_at: now,
      updated_at: now,
      edge_seq: null,
      phones_notified: null,
      drain_started_at: null,
      drain_calls: null,
      drain_timed_out: 0,
      last_error: null,
      finished_at: null,
    };
    await saveOrgMove(trx, row);
    return orgMoveView(trx, row);
  });
}

/** The org's latest move (admin): 404 for an unknown org, or one never moved. */
export async function getOrgMove(deps: MoveDeps, orgId: string): Promise<OrgMoveView> {
  if (!(await createOrganizationRepository(deps.db).findById(orgId))) {
    throw new NotFound(ORG_NOT_FOUND);
  }
  const row = await findOrgMove(deps.db, orgId);
  if (!row) throw new NotFound(NO_MOVE);
  return orgMoveView(deps.db, row);
}
