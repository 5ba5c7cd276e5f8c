// Finding an IVR for a caller: another org's IVR answers exactly like a missing one (404
// `IVR not found`, SPEC.md §1 rule 2), so an id never reveals that it exists elsewhere.
import type { Db } from "../../store/database.js";
import { createIvrRepository, type IvrRecord } from "../../store/ivr-repository.js";
import { NotFound } from "../errors.js";

export const IVR_NOT_FOUND = "IVR not found";

/** The IVR `id` of `orgId` as rows; 404 `IVR not found` when absent or another org's. */
export async function ownIvrRecord(db: Db, orgId: string, id: string): Promise<IvrRecord> {
  const record = await createIvrRepository(db).findRecord(orgId, id);
  if (!record) throw new NotFound(IVR_NOT_FOUND);
  return record;
}
