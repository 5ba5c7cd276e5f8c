// Rows that belong to an org, rewritten and deleted by id within their org: the same two
// statements every org resource's repository makes, written once. Rows that own child rows (a
// queue's members, an IVR's options) are deleted together, children first: explicit rather than
// relying on ON DELETE CASCADE, which SQLite only honours with the foreign_keys pragma on.
import type { Updateable } from "kysely";
import type { Db } from "./database.js";
import type { Database } from "./schema.js";

/** The org resources whose rows these helpers read and write by id. */
type OwnedTable = "users" | "queues" | "ivrs" | "org_users" | "webhooks";

/** Writes `columns` on row `id` of the org; true when a row changed. */
export async function updateOwned<T extends OwnedTable>(
  db: Db,
  table: T,
  orgId: string,
  id: string,
  columns: Updateable<Database[T]>,
): Promise<boolean> {
  const result = await db
    .updateTable(table as OwnedTable)
    .set(columns as Updateable<Database[OwnedTable]>)
    .where("org_id", "=", orgId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes row `id` of the org; true when a row was deleted. */
export async function deleteOwned(
  db: Db,
  table: OwnedTable,
  orgId: string,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom(table)
    .where("org_id", "=", orgId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes row `id` of the org and its children; true when the row existed in that org. */
export async function deleteOwnedWithChildren(
  db: Db,
  table: "queues" | "ivrs",
  orgId: string,
  id: string,
): Promise<boolean> {
  const owned = await db
    .selectFrom(table)
    .select("id")
    .where("org_id", "=", orgId)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!owned) return false;
  if (table === "queues") {
    await db.deleteFrom("queue_members").where("queue_id", "=", id).execute();
  } else {
    await db.deleteFrom("ivr_options").where("ivr_id", "=", id).execute();
  }
  await db.deleteFrom(table).where("id", "=", id).execute();
  return true;
}
