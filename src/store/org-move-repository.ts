// Org moves (migration 3000, issue 25): one row per org, its latest move between engine nodes,
// written by `moveOrg` (src/domain/nodes/org-moves.ts) and advanced phase by phase by the `org-moves`
// lease holder (src/domain/nodes/org-move-driver.ts).
import type { OrgMoveRecord } from "../model/stored-records.js";
import type { Db } from "./database.js";

/** The move row is the model's record (src/model/stored-records.ts). */
export type OrgMovesTable = OrgMoveRecord;

export async function findOrgMove(db: Db, orgId: string): Promise<OrgMoveRecord | undefined> {
  return db.selectFrom("org_moves").selectAll().where("org_id", "=", orgId).executeTakeFirst();
}

/** Records a new move of the org (replacing its last, finished one). */
export async function saveOrgMove(db: Db, row: OrgMoveRecord): Promise<void> {
  await db.deleteFrom("org_moves").where("org_id", "=", row.org_id).execute();
  await db.insertInto("org_moves").values(row).execute();
}

/** Changes fields of move `id` (never another move of the same org). */
export async function updateOrgMove(
  db: Db,
  id: string,
  change: Partial<Omit<OrgMoveRecord, "org_id" | "id">>,
): Promise<void> {
  await db.updateTable("org_moves").set(change).where("id", "=", id).execute();
}

/** Every unfinished move, oldest first. */
export async function listUnfinishedMoves(db: Db): Promise<OrgMoveRecord[]> {
  return db
    .selectFrom("org_moves")
    .selectAll()
    .where("finished_at", "is", null)
    .orderBy("requested_at")
    .orderBy("org_id")
    .execute();
}

/** Where an unfinished move stands: which nodes hold its org (`holdsOrg`) follows from these. */
export type MoveSides = Pick<
  OrgMoveRecord,
  "org_id" | "source_node_id" | "target_node_id" | "phase"
>;

/** The sides and phase of every unfinished move, by org id. */
export async function listUnfinishedMoveSides(db: Db): Promise<MoveSides[]> {
  return db
    .selectFrom("org_moves")
    .select(["org_id", "source_node_id", "target_node_id", "phase"])
    .where("finished_at", "is", null)
    .orderBy("org_id")
    .execute();
}
