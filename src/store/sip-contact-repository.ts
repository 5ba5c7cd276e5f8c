// The phones' registered contacts per org and AOR (migration 2101), as the engine reported them.
import type { Db } from "./database.js";

export interface SipContactsTable {
  org_id: string;
  aor: string;
  uri: string;
  created_at: string;
}

/** Records a registered contact; false when it was already recorded (a replayed event). */
export async function addSipContact(
  db: Db,
  row: { orgId: string; aor: string; uri: string; now: string },
): Promise<boolean> {
  const result = await db
    .insertInto("sip_contacts")
    .values({ org_id: row.orgId, aor: row.aor, uri: row.uri, created_at: row.now })
    .onConflict((oc) => oc.columns(["org_id", "aor", "uri"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Forgets a contact; false when it was not recorded (a replayed event). */
export async function removeSipContact(
  db: Db,
  row: { orgId: string; aor: string; uri: string },
): Promise<boolean> {
  const result = await db
    .deleteFrom("sip_contacts")
    .where("org_id", "=", row.orgId)
    .where("aor", "=", row.aor)
    .where("uri", "=", row.uri)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** How many contacts of the org's AOR are recorded. */
export async function countSipContacts(db: Db, orgId: string, aor: string): Promise<number> {
  const row = await db
    .selectFrom("sip_contacts")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("org_id", "=", orgId)
    .where("aor", "=", aor)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The org's AORs with a registered contact (the phones registered now), by name. */
export async function registeredAors(db: Db, orgId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("sip_contacts")
    .select("aor")
    .distinct()
    .where("org_id", "=", orgId)
    .orderBy("aor")
    .execute();
  return rows.map((row) => row.aor);
}
