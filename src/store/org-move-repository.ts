// Org moves (migration 3000, issue 25): one row per org, its latest move between engine nodes,
// written by `moveOrg` (src/domain/nodes/org-moves.ts) and advanced phase by phase by the `org-moves`
// lease holder (src/domain/nodes/org-move-driver.ts).
import type { Db } from "./database.js";

/** A move's phases, in order (docs/nodes.md, "Moving an org"). */
export const MOVE_PHASES = [
  "deploying",
  "switching",
  "re-registering",
  "draining",
  "removing",
  "done",
] as const;
export type MovePhase = (typeof MOVE_PHASES)[number];

export interface OrgMovesTable {
  org_id: string;
  id: string;
  source_node_id: string;
  target_node_id: string;
  phase: MovePhase;
  call_drain_timeout_s: number;
  requested_at: string;
  updated_at: string;
  edge_seq: number | null;
  phones_notified: number | null;
  drain_started_at: string | null;
  drain_calls: number | null;
  /** 0/1. */
  drain_timed_out: number;
  last_error: string | null;
  finished_at: string | null;
}

export type OrgMoveRow = OrgMovesTable;

export async function findOrgMove(db: Db, orgId: string): Promise<OrgMoveRow | undefined> {
  return db.selectFrom("org_moves").selectAll().where("org_id", "=", orgId).executeTakeFirst();
}

/** Records a new move of the org (replacing its last, finished one). */
export async function saveOrgMove(db: Db, row: OrgMoveRow): Promise<void> {
  await db.deleteFrom("org_moves").where("org_id", "=", row.org_id).execute();
  await db.insertInto("org_moves").values(row).execute();
}

/** Changes fields of move `id` (never another move of the same org). */
export async function updateOrgMove(
  db: Db,
  id: string,
  change: Partial<Omit<OrgMoveRow, "org_id" | "id">>,
): Promise<void> {
  await db.updateTable("org_moves").set(change).where("id", "=", id).execute();
}

/** Every unfinished move, oldest first. */
export async function listUnfinishedMoves(db: Db): Promise<OrgMoveRow[]> {
  return db
    .selectFrom("org_moves")
    .selectAll()
    .where("finished_at", "is", null)
    .orderBy("requested_at")
    .orderBy("org_id")
    .execute();
}
