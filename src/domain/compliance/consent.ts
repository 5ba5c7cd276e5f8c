// Recording consent per phone number (issue 16): a refused number is not recorded even when the
// org records calls. Refused numbers reach the compiled dialplan (OrgState, store-builds.ts), so
// every change schedules the org's deploy like any configuration change.
import { randomUUID } from "node:crypto";
import type { ConsentRecord, ConsentView } from "../../model/compliance-views.js";
import type { RecordingConsent } from "../../model/consent.js";
import {
  deleteConsent,
  findConsent,
  insertConsent,
  listConsent,
} from "../../store/consent-repository.js";
import { isUniqueViolation } from "../../store/constraint-errors.js";
import type { Db } from "../../store/database.js";
import { notifyConfigChanged } from "../config/config-change.js";
import { Conflict, NotFound } from "../errors.js";
import type { DeployScheduler } from "../ports.js";

export const CONSENT_NOT_FOUND = "Consent record not found";

function view(row: ConsentRecord): ConsentView {
  return {
    id: row.id,
    phone: row.phone,
    recording_consent: row.recording_consent,
    source: row.source,
    recorded_at: row.recorded_at,
    created_at: row.created_at,
  };
}

interface ConsentDeps {
  db: Db;
  deployScheduler: DeployScheduler;
}

/** The org's consent records by phone. */
export async function listConsentRecords(
  db: Db,
  orgId: string,
  filter: { phone?: string; recording_consent?: RecordingConsent },
): Promise<ConsentView[]> {
  const rows = await listConsent(db, orgId, {
    ...(filter.phone !== undefined ? { phone: filter.phone } : {}),
    ...(filter.recording_consent !== undefined
      ? { recordingConsent: filter.recording_consent }
      : {}),
  });
  return rows.map(view);
}

/** One record of the org; 404 for an unknown id or another org's. */
export async function getConsentRecord(db: Db, orgId: string, id: string): Promise<ConsentView> {
  const row = await findConsent(db, orgId, id);
  if (!row) throw new NotFound(CONSENT_NOT_FOUND);
  return view(row);
}

/** Records a number's consent; 409 when the number already has a record (delete it first). */
export async function createConsentRecord(
  deps: ConsentDeps,
  orgId: string,
  input: {
    phone: string;
    recording_consent: RecordingConsent;
    source: string;
    recorded_at?: string;
  },
  now: Date,
): Promise<ConsentView> {
  const row: ConsentRecord = {
    id: randomUUID(),
    org_id: orgId,
    phone: input.phone,
    recording_consent: input.recording_consent,
    source: input.source,
    recorded_at: input.recorded_at ? new Date(input.recorded_at).toISOString() : now.toISOString(),
    created_at: now.toISOString(),
  };
  try {
    await insertConsent(deps.db, row);
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new Conflict(`Consent for ${input.phone} is already recorded`);
    }
    throw error;
  }
  if (row.recording_consent === "refused") await notifyConfigChanged(deps, orgId);
  return view(row);
}

/** Deletes one record of the org; 404 for an unknown id or another org's. */
export async function deleteConsentRecord(
  deps: ConsentDeps,
  orgId: string,
  id: string,
): Promise<void> {
  const row = await findConsent(deps.db, orgId, id);
  if (!row || !(await deleteConsent(deps.db, orgId, id))) throw new NotFound(CONSENT_NOT_FOUND);
  if (row.recording_consent === "refused") await notifyConfigChanged(deps, orgId);
}
