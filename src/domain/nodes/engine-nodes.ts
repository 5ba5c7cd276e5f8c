// Engine nodes (issue 25, docs/nodes.md): the Asterisk nodes the install deploys to, managed by
// admins (`/admin/engine-nodes`, `pbxctl nodes`). The AMI secret is sealed under the server key
// at once and no view ever holds it. Adding the first node places every existing org on it (an
// install that had one implicit engine names it), so once a node exists every org has one.
import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.js";
import {
  AMI_USERNAME,
  MAX_NODE_CAPACITY,
  NODE_STATES,
  type NodeState,
  SIP_ADDRESS,
  SIP_ADDRESS_RULE,
} from "../../model/engine-node.js";
import { type EngineNodeView, EngineNodeViewSchema } from "../../model/node-views.js";
import { Host, PRINTABLE_ASCII, Slug } from "../../model/org-state.js";
import type { EngineNodeRecord } from "../../model/stored-records.js";
import { viewOf } from "../../model/view-shapes.js";
import { isUniqueViolation } from "../../store/constraint-errors.js";
import type { Db } from "../../store/database.js";
import {
  countEngineNodes,
  deleteEngineNode as deleteNodeRow,
  insertEngineNode,
  listEngineNodes as listNodeRows,
  listNodeSystemNames,
  lockNodesForPlacement,
  type NodeLoad,
  nodeLoads,
  savePlacement,
  unplacedOrgIds,
  updateEngineNode as updateNodeRow,
} from "../../store/engine-node-repository.js";
import { handImplicitEngineDebtTo } from "../../store/pjsip-realtime-repository.js";
import { BadRequest, Conflict } from "../errors.js";
import { encrypt } from "../secrets.js";
import { findNodeRow } from "./engine-node-lookup.js";
import { occupied } from "./placement.js";
import { systemNameProblems } from "./system-names.js";

/** What the node use cases need: the store, the sealing key and the time. */
export interface NodeDeps {
  db: Db;
  config: { serverKey: Buffer };
  clock: Clock;
}

/** A node as admins see it (`Static<>` of its response schema): never its AMI secret. */
export type { EngineNodeView } from "../../model/node-views.js";

export interface EngineNodeInput {
  name?: string;
  ami_host?: string;
  ami_port?: number;
  ami_username?: string;
  ami_secret?: string;
  sip_address?: string;
  capacity?: number;
  state?: NodeState;
}

export type NewEngineNode = EngineNodeInput & {
  name: string;
  ami_username: string;
  ami_secret: string;
  sip_address: string;
  capacity: number;
};

export const DEFAULT_AMI_PORT = 5038;

/** Every node's last-seen systemname and the problems they make, for the views. */
interface NodeSystems {
  names: Map<string, string>;
  problems: Map<string, string>;
}

async function nodeSystems(db: Db, rows: readonly EngineNodeRecord[]): Promise<NodeSystems> {
  const names = await listNodeSystemNames(db);
  const problems = systemNameProblems(
    rows.map((row) => ({ id: row.id, name: row.name, systemName: names.get(row.id) ?? null })),
  );
  return { names, problems };
}

function view(
  row: EngineNodeRecord,
  load: NodeLoad | undefined,
  systems: NodeSystems,
): EngineNodeView {
  // The schema picks the fields shown: the sealed AMI secret is not among them.
  return viewOf(EngineNodeViewSchema, {
    ...row,
    orgs: load?.primaries ?? 0,
    standby_orgs: load?.standbys ?? 0,
    system_name: systems.names.get(row.id) ?? null,
    problem: systems.problems.get(row.id) ?? null,
  });
}

const PATTERN_RULES: ReadonlyArray<readonly [keyof EngineNodeInput, string, string]> = [
  ["name", Slug.pattern!, "must be a slug: lowercase letters, digits and -, at most 63"],
  ["ami_host", Host.pattern!, "must be a host name, an IPv4 address or an [IPv6] address"],
  ["ami_username", AMI_USERNAME, "must be 1-64 letters, digits or . _ + @ -"],
  ["ami_secret", PRINTABLE_ASCII, "must be printable ASCII, no spaces"],
  ["sip_address", SIP_ADDRESS, SIP_ADDRESS_RULE],
];

/**
 * The field rules, with the same words as the API's schema (the CLI has no schema in front of
 * it): 400 naming the first bad field.
 */
export function checkNodeInput(input: EngineNodeInput): void {
  for (const [field, pattern, rule] of PATTERN_RULES) {
    const value = input[field];
    if (value !== undefined && !new RegExp(pattern).test(String(value))) {
      throw new BadRequest(`${field} ${rule}`);
    }
  }
  if (input.ami_secret !== undefined && input.ami_secret.length > 128) {
    throw new BadRequest("ami_secret must be at most 128 characters");
  }
  const port = input.ami_port;
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    throw new BadRequest("ami_port must be a port number (1-65535)");
  }
  const sipPort = input.sip_address?.match(/:([0-9]{1,5})$/)?.[1];
  if (sipPort !== undefined && (Number(sipPort) < 1 || Number(sipPort) > 65535)) {
    throw new BadRequest("sip_address port must be 1-65535");
  }
  const capacity = input.capacity;
  if (
    capacity !== undefined &&
    (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_NODE_CAPACITY)
  ) {
    throw new BadRequest(`capacity must be a whole number from 1 to ${MAX_NODE_CAPACITY}`);
  }
  if (input.state !== undefined && !NODE_STATES.includes(input.state)) {
    throw new BadRequest(`state must be one of ${NODE_STATES.join(", ")}`);
  }
}

function nameTaken(error: unknown, name: string): never {
  if (isUniqueViolation(error)) throw new Conflict(`Engine node '${name}' already exists`);
  throw error;
}

/** Every node with its load, by name. */
export async function listEngineNodes(deps: Pick<NodeDeps, "db">): Promise<EngineNodeView[]> {
  const loads = await nodeLoads(deps.db);
  const rows = await listNodeRows(deps.db);
  const systems = await nodeSystems(deps.db, rows);
  return rows.map((row) => view(row, loads.get(row.id), systems));
}

/** One node by id or name; 404 `Engine node not found`. */
export async function getEngineNode(
  deps: Pick<NodeDeps, "db">,
  ref: string,
): Promise<EngineNodeView> {
  const row = await findNodeRow(deps.db, ref);
  // The problems are judged over every node (a duplicate is another node's systemname).
  const systems = await nodeSystems(deps.db, await listNodeRows(deps.db));
  return view(row, (await nodeLoads(deps.db)).get(row.id), systems);
}

/**
 * Adds a node. The first node of an install takes every org that exists (they ran on the one
 * implicit engine, which this node now names), so its capacity must hold them: 409 otherwise;
 * and what the implicit engine was still owed of realtime PJSIP changes.
 */
export async function createEngineNode(
  deps: NodeDeps,
  input: NewEngineNode,
): Promise<EngineNodeView> {
  checkNodeInput(input);
  const now = deps.clock().toISOString();
  const row: EngineNodeRecord = {
    id: randomUUID(),
    name: input.name,
    ami_host: input.ami_host ?? "127.0.0.1",
    ami_port: input.ami_port ?? DEFAULT_AMI_PORT,
    ami_username: input.ami_username,
    ami_secret_sealed: encrypt(input.ami_secret, deps.config.serverKey),
    sip_address: input.sip_address,
    capacity: input.capacity,
    state: input.state ?? "active",
    created_at: now,
    updated_at: now,
  };
  await deps.db.transaction().execute(async (trx) => {
    await lockNodesForPlacement(trx);
    const first = (await countEngineNodes(trx)) === 0;
    try {
      await insertEngineNode(trx, row);
    } catch (error) {
      nameTaken(error, row.name);
    }
    if (!first) return;
    const orgs = await unplacedOrgIds(trx);
    if (orgs.length > row.capacity) {
      throw new Conflict(
        `Engine node '${row.name}' has room for ${row.capacity} organizations; the first node takes every existing one (${orgs.length})`,
      );
    }
    for (const orgId of orgs) {
      await savePlacement(trx, {
        org_id: orgId,
        node_id: row.id,
        standby_node_id: null,
        pinned: 0,
        placed_at: now,
      });
    }
    // Realtime PJSIP: the cache expiries the implicit engine was owed are this node's now. Rows
    // the implicit engine's deployer had not written yet (its write failed and waited for a
    // retry) need nothing here: this node's start-up deploy writes every org's rows anew.
    await handImplicitEngineDebtTo(trx, row.id);
  });
  return getEngineNode(deps, row.id);
}

/** Changes a node (partial). Its capacity may not go below the orgs it holds: 409. */
export async function updateEngineNode(
  deps: NodeDeps,
  ref: string,
  input: EngineNodeInput,
): Promise<EngineNodeView> {
  checkNodeInput(input);
  const id = await deps.db.transaction().execute(async (trx) => {
    await lockNodesForPlacement(trx);
    const current = await findNodeRow(trx, ref);
    const { ami_secret: secret, ...plain } = input;
    const next: EngineNodeRecord = {
      ...current,
      ...Object.fromEntries(Object.entries(plain).filter(([, v]) => v !== undefined)),
      ...(secret !== undefined
        ? { ami_secret_sealed: encrypt(secret, deps.config.serverKey) }
        : {}),
      updated_at: deps.clock().toISOString(),
    };
    // The orgs of unfinished moves through it count: lowering it under a move racing in would
    // over-fill it once the move lands.
    const held = occupied((await nodeLoads(trx)).get(current.id));
    if (next.capacity < held) {
      throw new Conflict(
        `Engine node '${current.name}' holds ${held} organizations: its capacity cannot be below that`,
      );
    }
    try {
      await updateNodeRow(trx, next);
    } catch (error) {
      nameTaken(error, next.name);
    }
    return current.id;
  });
  return getEngineNode(deps, id);
}

/** `draining`: the node keeps its orgs and is given no new one. */
export async function drainEngineNode(deps: NodeDeps, ref: string): Promise<EngineNodeView> {
  return updateEngineNode(deps, ref, { state: "draining" });
}

/** Removes a node that holds no org (as primary or standby): 409 naming how many it holds. */
export async function deleteEngineNode(deps: Pick<NodeDeps, "db">, ref: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await lockNodesForPlacement(trx);
    const node = await findNodeRow(trx, ref);
    const load = (await nodeLoads(trx)).get(node.id);
    const held = (load?.primaries ?? 0) + (load?.standbys ?? 0);
    if (held > 0) {
      throw new Conflict(
        `Engine node '${node.name}' still holds ${held} organizations (primary or standby): place them elsewhere first`,
      );
    }
    // A side of an unfinished move holds the org's config until the move is done.
    if (load?.moving) {
      throw new Conflict(
        `Engine node '${node.name}' still holds ${load.moving} organizations being moved: wait until their moves are done`,
      );
    }
    await deleteNodeRow(trx, node.id);
  });
}
