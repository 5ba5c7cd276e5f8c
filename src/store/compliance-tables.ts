// Row types of the compliance tables (migration 2601).
import type { Generated, Selectable } from "kysely";
import type { RecordingConsent } from "../model/consent.js";

export interface AuditLogTable {
  id: Generated<number>;
  org_id: string | null;
  created_at: string;
  actor_kind: string;
  actor_id: string | null;
  request_id: string;
  resource_type: string;
  resource_id: string | null;
  action: string;
  operation: string;
  before: string | null;
  after: string | null;
  diff: string;
  schedules_deploy: number;
}

export interface AuditPurgeGateTable {
  org_id: string;
}

export interface RetentionPoliciesTable {
  org_id: string;
  kind: string;
  days: number | null;
  updated_at: string;
}

export interface ConsentRecordsTable {
  id: string;
  org_id: string;
  phone: string;
  recording_consent: RecordingConsent;
  source: string;
  recorded_at: string;
  created_at: string;
}

export type AuditLogRow = Selectable<AuditLogTable>;
export type ConsentRecordRow = Selectable<ConsentRecordsTable>;
