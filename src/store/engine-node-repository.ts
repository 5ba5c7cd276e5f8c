// Engine nodes and org placements (migration 2970). The node rows hold the AMI secret sealed
// (`encrypt()` output); only the deploy side opens it. `lockNodesForPlacement` is what keeps two
// replicas placing orgs at once from overfilling a node on PostgreSQL: every placement decision
// first locks the node rows (in one order, so two decisions never deadlock), then counts; SQLite's
// IMMEDIATE write transactions already run one at a time.
import { createHash } from "node:crypto";
import { sql } from "kysely";
import type {
  EngineNodeRecord,
  OrgHandleRecord,
  OrgPlacementRecord,
} from "../model/stored-records.js";
import type { Db } from "./database.js";
import { forgetAppliedOfNode } from "./deploy-record-repository.js";
import { forgetRequestsOfNode } from "./deploy-request-repository.js";
import { storeDialect } from "./dialect.js";
import { NODES_SCOPE, requestEdgePush } from "./edge-sync-repository.js";
import {
  dropNodeRealtimeViews,
  ensureNodeRealtimeViews,
  renameNodeRealtimeViews,
} from "./node-realtime-views.js";
import { findOrgMove, listUnfinishedMoveSides, type MoveSides } from "./org-move-repository.js";
import { SERVED_ORG_STATUS } from "./organization-repository.js";
import { forgetDebtOfNode } from "./pjsip-realtime-repository.js";

/** The node row is the model's record (src/model/stored-records.ts). */
export type EngineNodesTable = EngineNodeRecord;

/** The placement row is the model's record (src/model/stored-records.ts). */
export type OrgPlacementsTable = OrgPlacementRecord;

/** What a node carries: orgs placed on it as primary, as standby, and on their way through it. */
export interface NodeLoad {
  primaries: number;
  standbys: number;
  /**
   * Orgs of unfinished moves the node holds without being their primary: the target until the
   * move switches the placement, the source from then until the move is done (it keeps the
   * org's config while its calls drain). Each takes a place of the node's capacity as a
   * primary does, so nothing placed meanwhile can over-fill the node.
   */
  moving: number;
}

/** Every node, by name. */
export async function listEngineNodes(db: Db): Promise<EngineNodeRecord[]> {
  return db.selectFrom("engine_nodes").selectAll().orderBy("name").execute();
}

export async function countEngineNodes(db: Db): Promise<number> {
  const row = await db
    .selectFrom("engine_nodes")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findEngineNode(db: Db, id: string): Promise<EngineNodeRecord | undefined> {
  return db.selectFrom("engine_nodes").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findEngineNodeByName(
  db: Db,
  name: string,
): Promise<EngineNodeRecord | undefined> {
  return db.selectFrom("engine_nodes").selectAll().where("name", "=", name).executeTakeFirst();
}

/** Inserts a node; on PostgreSQL its realtime PJSIP views are created with it. */
export async function insertEngineNode(db: Db, row: EngineNodeRecord): Promise<void> {
  await db.insertInto("engine_nodes").values(row).execute();
  await ensureNodeRealtimeViews(db, row);
  await requestEdgePush(db, NODES_SCOPE);
}

/** Replaces every column but the id and the creation time; a rename renames its views' schema. */
export async function updateEngineNode(db: Db, row: EngineNodeRecord): Promise<void> {
  const { id, created_at: _created, ...rest } = row;
  const before = await findEngineNode(db, id);
  await db.updateTable("engine_nodes").set(rest).where("id", "=", id).execute();
  if (before && before.name !== row.name) {
    await renameNodeRealtimeViews(db, before.name, row.name);
  }
  await requestEdgePush(db, NODES_SCOPE);
}

/**
 * Deletes a node with everything kept for it alone (no foreign key does it): its realtime PJSIP
 * views, what its engine was still owed, what it runs (`node_applied_revisions`) and what it had
 * deployed of each org's requests (`node_deploy_requests`). Its deploy records stay as history.
 * Meant for the removal's transaction (`db` a transaction), so none of it outlives the node.
 */
export async function deleteEngineNode(db: Db, id: string): Promise<void> {
  const before = await findEngineNode(db, id);
  await db.deleteFrom("engine_nodes").where("id", "=", id).execute();
  if (before) await dropNodeRealtimeViews(db, before.name);
  await forgetDebtOfNode(db, id);
  await forgetAppliedOfNode(db, id);
  await forgetRequestsOfNode(db, id);
  await requestEdgePush(db, NODES_SCOPE);
}

/**
 * Waits until no other transaction is placing orgs, held until `trx` ends (PostgreSQL: a row lock
 * on every node; SQLite: nothing to do, its write transactions are serial).
 */
export async function lockNodesForPlacement(trx: Db): Promise<void> {
  if (storeDialect(trx) !== "postgres") return;
  await sql`select id from engine_nodes order by id for update`.execute(trx);
}

/** Each node's load by node id (nodes carrying nothing are absent). */
export async function nodeLoads(db: Db): Promise<Map<string, NodeLoad>> {
  const loads = new Map<string, NodeLoad>();
  const load = (id: string) => {
    const found = loads.get(id) ?? { primaries: 0, standbys: 0, moving: 0 };
    loads.set(id, found);
    return found;
  };
  const primaries = await db
    .selectFrom("org_placements")
    .select(["node_id", (eb) => eb.fn.countAll<number>().as("n")])
    .groupBy("node_id")
    .execute();
  for (const row of primaries) load(row.node_id).primaries = Number(row.n);
  const standbys = await db
    .selectFrom("org_placements")
    .select(["standby_node_id", (eb) => eb.fn.countAll<number>().as("n")])
    .where("standby_node_id", "is not", null)
    .groupBy("standby_node_id")
    .execute();
  for (const row of standbys) load(row.standby_node_id!).standbys = Number(row.n);
  const moves = await db
    .selectFrom("org_moves")
    .leftJoin("org_placements", "org_placements.org_id", "org_moves.org_id")
    .select(["org_moves.source_node_id", "org_moves.target_node_id", "org_placements.node_id"])
    .where("org_moves.finished_at", "is", null)
    .execute();
  for (const move of moves) {
    for (const side of [move.target_node_id, move.source_node_id]) {
      if (side !== move.node_id) {
        load(side).moving += 1;
        break;
      }
    }
  }
  return loads;
}

export async function findPlacement(
  db: Db,
  orgId: string,
): Promise<OrgPlacementRecord | undefined> {
  return db.selectFrom("org_placements").selectAll().where("org_id", "=", orgId).executeTakeFirst();
}

/** Every placement, by org id. */
export async function listPlacements(db: Db): Promise<OrgPlacementRecord[]> {
  return db.selectFrom("org_placements").selectAll().orderBy("org_id").execute();
}

/**
 * Whether `nodeId` holds the org of the `org_placements` row in scope: as its primary, as its
 * standby, or as a side of its unfinished move (the target from the start; the source until the
 * phase `removing`, so no call in progress loses its config before the move drained it). A
 * standby holds a warm copy (the same files, the same gateway routes) so the edge's fallback to
 * it finds the org's config there when the primary dies (issue 26). The one condition every
 * "which orgs does this node carry" question asks, so no caller forgets a case.
 */
export function holdsOrg(nodeId: string, options: { inline?: boolean } = {}) {
  // Inline: written into the text as a literal, for a view's definition (which takes no
  // parameters; src/store/node-realtime-views.ts checks the id's shape first).
  const id = options.inline ? sql.lit(nodeId) : sql`${nodeId}`;
  return sql<boolean>`(org_placements.node_id = ${id}
    or org_placements.standby_node_id = ${id}
    or exists (select 1 from org_moves
      where org_moves.org_id = org_placements.org_id and org_moves.finished_at is null
        and (org_moves.target_node_id = ${id}
          or (org_moves.source_node_id = ${id} and org_moves.phase <> 'removing'))))`;
}

/** Ids of the orgs `nodeId` holds (as primary or standby), by org id. */
export async function orgIdsOnNode(db: Db, nodeId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("org_placements")
    .select("org_id")
    .where(holdsOrg(nodeId))
    .orderBy("org_id")
    .execute();
  return rows.map((r) => r.org_id);
}

/** Id, prefix and status of the orgs `nodeId` holds (primary or standby), by context prefix. */
export async function orgHandlesOnNode(db: Db, nodeId: string): Promise<OrgHandleRecord[]> {
  return db
    .selectFrom("organizations")
    .innerJoin("org_placements", "org_placements.org_id", "organizations.id")
    .select(["organizations.id", "organizations.context_prefix", "organizations.status"])
    .where(holdsOrg(nodeId))
    .orderBy("organizations.context_prefix")
    .execute();
}

/** Context prefixes of the served orgs `nodeId` holds (that node's top-level includes). */
export async function servedPrefixesOnNode(db: Db, nodeId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("organizations")
    .innerJoin("org_placements", "org_placements.org_id", "organizations.id")
    .select("organizations.context_prefix")
    .where("organizations.status", "=", SERVED_ORG_STATUS)
    .where(holdsOrg(nodeId))
    .execute();
  return rows.map((row) => row.context_prefix);
}

/** Whether `nodeId` holds `orgId` (as its primary or its standby). */
export async function isOnNode(db: Db, orgId: string, nodeId: string): Promise<boolean> {
  const row = await db
    .selectFrom("org_placements")
    .select("org_id")
    .where("org_id", "=", orgId)
    .where(holdsOrg(nodeId))
    .executeTakeFirst();
  return row !== undefined;
}

/** The nodes holding one placed org, from its placement and its unfinished move. */
function holdersOf(
  placement: Pick<OrgPlacementRecord, "node_id" | "standby_node_id">,
  move: Omit<MoveSides, "org_id"> | undefined,
): string[] {
  const holders = [placement.node_id];
  const add = (nodeId: string | null) => {
    if (nodeId !== null && !holders.includes(nodeId)) holders.push(nodeId);
  };
  add(placement.standby_node_id);
  if (move) {
    add(move.target_node_id);
    if (move.phase !== "removing") add(move.source_node_id);
  }
  return holders;
}

/** The nodes holding the org's config (`holdsOrg`), its primary first; empty when unplaced. */
export async function orgHolders(db: Db, orgId: string): Promise<string[]> {
  const placement = await findPlacement(db, orgId);
  if (!placement) return [];
  const move = await findOrgMove(db, orgId);
  return holdersOf(placement, move?.finished_at === null ? move : undefined);
}

/** Every placed org's holders (`orgHolders`), by org id. */
export async function listOrgHolders(db: Db): Promise<Map<string, string[]>> {
  const moves = new Map((await listUnfinishedMoveSides(db)).map((move) => [move.org_id, move]));
  return new Map(
    (await listPlacements(db)).map((row) => [row.org_id, holdersOf(row, moves.get(row.org_id))]),
  );
}

/** Orgs with no placement row, oldest first. */
export async function unplacedOrgIds(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom("organizations")
    .leftJoin("org_placements", "org_placements.org_id", "organizations.id")
    .select("organizations.id")
    .where("org_placements.org_id", "is", null)
    .orderBy("organizations.created_at")
    .orderBy("organizations.id")
    .execute();
  return rows.map((r) => r.id);
}

/** Inserts or replaces an org's placement (and tells the edge, in the same transaction). */
export async function savePlacement(db: Db, row: OrgPlacementRecord): Promise<void> {
  await requestEdgePush(db, NODES_SCOPE);
  await db
    .insertInto("org_placements")
    .values(row)
    .onConflict((oc) =>
      oc.column("org_id").doUpdateSet({
        node_id: row.node_id,
        standby_node_id: row.standby_node_id,
        pinned: row.pinned,
        placed_at: row.placed_at,
      }),
    )
    .execute();
}

/**
 * A value that changes whenever a node, any org's primary or standby node, or an unfinished move's
 * phase changes (the node runtimes of
 * `serve` look at it every second, src/deploy/node-runtime.ts). Computed from the rows
 * themselves, not from timestamps, so replicas whose clocks differ never miss a change: on
 * PostgreSQL the database hashes the placements (one row comes back), on SQLite (local) they are
 * read and hashed here.
 */
export async function nodeTopologyFingerprint(db: Db): Promise<string> {
  const nodes = await db
    .selectFrom("engine_nodes")
    .select(["id", "updated_at", "state"])
    .orderBy("id")
    .execute();
  const hash = createHash("sha256").update(JSON.stringify(nodes));
  if (storeDialect(db) === "postgres") {
    const row = await sql<{ digest: string | null; n: string }>`
      select md5(string_agg(org_id || ':' || node_id || ':' || coalesce(standby_node_id, ''), ','
                            order by org_id)) as digest,
             count(*) as n
      from org_placements`.execute(db);
    hash.update(`${row.rows[0]?.digest ?? ""}/${row.rows[0]?.n ?? 0}`);
  } else {
    const rows = await db
      .selectFrom("org_placements")
      .select(["org_id", "node_id", "standby_node_id"])
      .orderBy("org_id")
      .execute();
    for (const row of rows) {
      hash.update(`${row.org_id}:${row.node_id}:${row.standby_node_id ?? ""},`);
    }
  }
  hash.update(JSON.stringify(await listUnfinishedMoveSides(db)));
  return hash.digest("hex");
}

/** Records what node `nodeId`'s Asterisk answered as its systemname (`''`: none) at a connect. */
export async function recordNodeSystemName(
  db: Db,
  nodeId: string,
  systemName: string,
  at: string,
): Promise<void> {
  await db
    .insertInto("engine_node_systems")
    .values({ node_id: nodeId, system_name: systemName, seen_at: at })
    .onConflict((oc) => oc.column("node_id").doUpdateSet({ system_name: systemName, seen_at: at }))
    .execute();
}

/** Each node's systemname as last seen, by node id (a node never reached is absent). */
export async function listNodeSystemNames(db: Db): Promise<Map<string, string>> {
  const rows = await db.selectFrom("engine_node_systems").selectAll().execute();
  return new Map(rows.map((row) => [row.node_id, row.system_name]));
}
