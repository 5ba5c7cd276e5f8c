// The audit log (issue 16): one record per mutation of the service, whoever made it (API caller,
// admin, internal service, `pbxctl apply`), with the before/after of the resource (secrets
// redacted) and the deploy its change led to. Records are only ever appended (the store's
// triggers refuse edits); retention is the one way they leave (src/domain/compliance/retention.ts).
import type { ActorKind, AuditRecordView, DiffEntry } from "../../model/compliance-views.js";
import {
  type AuditFilter,
  type AuditRowWithDeploy,
  type AuditScope,
  appendAuditRecord,
  auditPage,
  countAudit,
} from "../../store/audit-log-repository.js";
import type { Db } from "../../store/database.js";
import type { Principal } from "../access/principal.js";

export interface Actor {
  kind: ActorKind;
  /** Platform user id, `ak_` key id, admin user name; null for org key, org JWT, internal, cli. */
  id: string | null;
}

/** The actor of an authenticated request. */
export function actorOf(principal: Principal): Actor {
  if (principal.kind === "admin") return { kind: "admin", id: principal.username };
  if (principal.kind === "internal") return { kind: "internal", id: null };
  if (principal.kind === "pending-user") return { kind: "user", id: principal.subject };
  switch (principal.via) {
    case "user_jwt":
      return { kind: "user", id: principal.userId ?? null };
    case "api_key":
      return { kind: "api_key", id: principal.apiKeyId ?? null };
    case "org_jwt":
      return { kind: "org_jwt", id: null };
    case "internal":
      return { kind: "internal", id: null };
    default:
      return { kind: "org_key", id: null };
  }
}

export const REDACTED = "[redacted]";

// Field names that hold credentials anywhere in a resource (org secrets and keys, SIP and trunk
// passwords and their MD5 digests,
// webhook secrets, tokens). `password_env` names a variable, not a secret, but is
// redacted too: over-redacting loses nothing an auditor needs.
const SECRET_FIELD =
  /secret|password|token|api_key|apikey|private_key|authorization|digest|md5|cred/i;

/** `value` as JSON-safe data with every secret field replaced by `[redacted]`. */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Date) return value.toISOString();
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    if (field === undefined || typeof field === "function") continue;
    out[key] = SECRET_FIELD.test(key) && field !== null ? REDACTED : redact(field);
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** The leaf changes between two redacted values (objects compared key by key, arrays whole). */
export function diffValues(before: unknown, after: unknown, path = ""): DiffEntry[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) =>
      diffValues(before[key] ?? null, after[key] ?? null, path ? `${path}.${key}` : key),
    );
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path, before, after }];
}

export interface AuditEntry {
  orgId: string | null;
  actor: Actor;
  requestId: string;
  resourceType: string;
  resourceId: string | null;
  action: string;
  operation: string;
  before: unknown;
  after: unknown;
  schedulesDeploy: boolean;
}

/** Appends one record; before/after are redacted here, whatever the caller passed. */
export async function recordAudit(db: Db, now: Date, entry: AuditEntry): Promise<number> {
  const before = entry.before === undefined ? null : redact(entry.before);
  const after = entry.after === undefined ? null : redact(entry.after);
  return appendAuditRecord(db, {
    org_id: entry.orgId,
    created_at: now.toISOString(),
    actor_kind: entry.actor.kind,
    actor_id: entry.actor.id,
    request_id: entry.requestId,
    resource_type: entry.resourceType,
    resource_id: entry.resourceId,
    action: entry.action,
    operation: entry.operation,
    before: before === null ? null : JSON.stringify(before),
    after: after === null ? null : JSON.stringify(after),
    diff: JSON.stringify(diffValues(before, after)),
    schedules_deploy: entry.schedulesDeploy ? 1 : 0,
  });
}

function view(row: AuditRowWithDeploy): AuditRecordView {
  return {
    id: row.id,
    org_id: row.org_id,
    created_at: row.created_at,
    actor: { kind: row.actor_kind, id: row.actor_id },
    request_id: row.request_id,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    action: row.action,
    operation: row.operation,
    before: row.before === null ? null : JSON.parse(row.before),
    after: row.after === null ? null : JSON.parse(row.after),
    diff: JSON.parse(row.diff) as DiffEntry[],
    schedules_deploy: row.schedules_deploy === 1,
    deploy_revision: row.deploy_revision,
  };
}

export type { AuditFilter, AuditScope };

/** One page of the org's records (oldest first) and the total matching `filter`. */
export async function listAudit(
  db: Db,
  orgId: AuditScope,
  filter: AuditFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: AuditRecordView[]; total: number }> {
  const [rows, total] = await Promise.all([
    auditPage(db, orgId, filter, page),
    countAudit(db, orgId, filter),
  ]);
  return { rows: rows.map(view), total };
}

const EXPORT_BATCH = 500;

/** Every matching record of the org, oldest first, read in batches (an export never holds all). */
export async function* auditRecords(
  db: Db,
  orgId: string,
  filter: AuditFilter,
): AsyncGenerator<AuditRecordView> {
  let afterId: number | undefined;
  for (;;) {
    const rows = await auditPage(db, orgId, filter, {
      limit: EXPORT_BATCH,
      ...(afterId !== undefined ? { afterId } : {}),
    });
    for (const row of rows) yield view(row);
    if (rows.length < EXPORT_BATCH) return;
    afterId = rows[rows.length - 1]!.id;
  }
}

export const CSV_COLUMNS = [
  "id",
  "org_id",
  "created_at",
  "actor_kind",
  "actor_id",
  "request_id",
  "resource_type",
  "resource_id",
  "action",
  "operation",
  "schedules_deploy",
  "deploy_revision",
  "before",
  "after",
  "diff",
] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF, quotes doubled. A
 * field starting with `= + - @` (or tab/CR) gets a leading `'` so a spreadsheet opening the
 * export never runs it as a formula (OWASP CSV injection).
 */
export function csvField(value: unknown): string {
  let text =
    value === null || value === undefined
      ? ""
      : typeof value === "string"
        ? value
        : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A record as one CSV line (CRLF-terminated). */
export function csvLine(record: AuditRecordView): string {
  const values: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    id: String(record.id),
    org_id: record.org_id,
    created_at: record.created_at,
    actor_kind: record.actor.kind,
    actor_id: record.actor.id,
    request_id: record.request_id,
    resource_type: record.resource_type,
    resource_id: record.resource_id,
    action: record.action,
    operation: record.operation,
    schedules_deploy: String(record.schedules_deploy),
    deploy_revision: record.deploy_revision,
    before: record.before,
    after: record.after,
    diff: record.diff,
  };
  return `${CSV_COLUMNS.map((column) => csvField(values[column])).join(",")}\r\n`;
}

/** The export as text chunks: NDJSON (one record per line) or CSV with a header row. */
export async function* auditExport(
  db: Db,
  orgId: string,
  filter: AuditFilter,
  format: "ndjson" | "csv",
): AsyncGenerator<string> {
  if (format === "csv") yield `${CSV_COLUMNS.join(",")}\r\n`;
  for await (const record of auditRecords(db, orgId, filter)) {
    yield format === "csv" ? csvLine(record) : `${JSON.stringify(record)}\n`;
  }
}
