// Recording consent per org and phone number (migration 2601).
// Its rows are the model's ConsentRecord as they are (the consent column typed by the model).
import type { ConsentRecord } from "../model/compliance-views.js";
import type { RecordingConsent } from "../model/consent.js";
import type { Db } from "./database.js";

/** Inserts a record; a second record for the same org and phone fails on the unique index. */
export async function insertConsent(db: Db, record: ConsentRecord): Promise<void> {
  await db.insertInto("consent_records").values(record).execute();
}

/** The org's records by phone (optionally one phone or one consent value). */
export async function listConsent(
  db: Db,
  orgId: string,
  filter: { phone?: string; recordingConsent?: RecordingConsent } = {},
): Promise<ConsentRecord[]> {
  let query = db.selectFrom("consent_records").selectAll().where("org_id", "=", orgId);
  if (filter.phone !== undefined) query = query.where("phone", "=", filter.phone);
  if (filter.recordingConsent !== undefined) {
    query = query.where("recording_consent", "=", filter.recordingConsent);
  }
  return query.orderBy("phone").execute();
}

/** One record of the org, or undefined (another org's id is undefined too). */
export async function findConsent(
  db: Db,
  orgId: string,
  id: string,
): Promise<ConsentRecord | undefined> {
  return db
    .selectFrom("consent_records")
    .selectAll()
    .where("org_id", "=", orgId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** Deletes one record of the org; false when the org has no such record. */
export async function deleteConsent(db: Db, orgId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("consent_records")
    .where("org_id", "=", orgId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The org's refused numbers (E.164), sorted: what the compiler keeps from being recorded. */
export async function refusedNumbers(db: Db, orgId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("consent_records")
    .select("phone")
    .where("org_id", "=", orgId)
    .where("recording_consent", "=", "refused")
    .orderBy("phone")
    .execute();
  return rows.map((row) => row.phone);
}
