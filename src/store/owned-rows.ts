// Rows that belong to an org and own child rows (a queue's members, an IVR's options): deleted
// together, children first. Explicit rather than relying on ON DELETE CASCADE, which SQLite only
// honours with the foreign_keys pragma on.
import type { Db } from "./database.js";

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
