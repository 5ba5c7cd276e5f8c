// Compliance (`/compliance/*`, SPEC.md §4.8: org + RBAC): the audit log, retention policies and
// recording consent. Who: org-wide credentials (org key, org JWT, internal key + org_id) and
// platform users whose role holds `compliance.read` / `compliance.write` (owner, admin). `ak_`
// keys never do: the two permissions are role-only (src/domain/access/permissions.ts), as an `ak_` key
// is handed to integrations and the audit log shows every change of the org.
import { Readable } from "node:stream";
import { Type } from "@sinclair/typebox";
import { type AuditFilter, auditExport, listAudit } from "../../domain/compliance/audit-log.js";
import {
  createConsentRecord,
  deleteConsentRecord,
  getConsentRecord,
  listConsentRecords,
} from "../../domain/compliance/consent.js";
import {
  getRetention,
  purgeOrg,
  RETENTION_DAYS,
  setRetention,
} from "../../domain/compliance/retention.js";
import {
  ACTOR_KINDS,
  AuditRecordViewSchema as AuditRecord,
  RecordingConsentSchema as Consent,
  ConsentViewSchema as ConsentRecord,
  E164PhoneSchema as Phone,
} from "../../model/compliance-views.js";
import { ONE_LINE } from "../../model/org-state.js";
import { PageOf } from "../pagination.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, Nullable, UuidString } from "../schemas.js";

const TAG = "Compliance" as const;

const AuditQuery = {
  actor_kind: Type.Optional(Type.Union(ACTOR_KINDS.map((k) => Type.Literal(k)))),
  actor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  resource_type: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: "e.g. users, queues, organizations" }),
  ),
  resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 150 })),
  action: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: "create, update, delete, apply, ..." }),
  ),
  from: Type.Optional(Type.String({ format: "date-time", description: "inclusive" })),
  to: Type.Optional(Type.String({ format: "date-time", description: "exclusive" })),
};

type AuditQueryValue = {
  actor_kind?: string;
  actor_id?: string;
  resource_type?: string;
  resource_id?: string;
  action?: string;
  from?: string;
  to?: string;
};

function filterOf(query: AuditQueryValue): AuditFilter {
  const filter: AuditFilter = {};
  if (query.actor_kind !== undefined) filter.actorKind = query.actor_kind;
  if (query.actor_id !== undefined) filter.actorId = query.actor_id;
  if (query.resource_type !== undefined) filter.resourceType = query.resource_type;
  if (query.resource_id !== undefined) filter.resourceId = query.resource_id;
  if (query.action !== undefined) filter.action = query.action;
  if (query.from !== undefined) filter.from = new Date(query.from).toISOString();
  if (query.to !== undefined) filter.to = new Date(query.to).toISOString();
  return filter;
}

const Days = Nullable(
  Type.Integer({ ...RETENTION_DAYS, description: "days kept; null keeps forever" }),
);
const RetentionPolicy = Type.Object(
  { call_records: Days, recordings: Days, tickets: Days, audit: Days },
  { title: "RetentionPolicy" },
);
const RetentionChange = Type.Object(
  {
    call_records: Type.Optional(Days),
    recordings: Type.Optional(Days),
    tickets: Type.Optional(Days),
    audit: Type.Optional(Days),
  },
  { additionalProperties: false, minProperties: 1 },
);
const KindReport = Type.Object({
  days: Nullable(Type.Integer()),
  cutoff: Nullable(Type.String({ format: "date-time" })),
  deleted: Type.Integer({ minimum: 0, description: "deleted, or that would be (dry run)" }),
  supported: Type.Boolean({ description: "false: no purger registered for this kind yet" }),
});
const PurgeReport = Type.Object(
  {
    org_id: UuidString,
    dry_run: Type.Boolean(),
    ran_at: Type.String({ format: "date-time" }),
    kinds: Type.Object({
      call_records: KindReport,
      recordings: KindReport,
      tickets: KindReport,
      audit: KindReport,
    }),
  },
  { title: "PurgeReport" },
);

export const complianceRoutes = [
  defineRoute({
    method: "get",
    path: "/compliance/audit",
    tag: TAG,
    summary: "The org's audit log, oldest first, filtered",
    description:
      "One record per change of the org (API, admin, internal key, `pbxctl apply`): actor, request id, resource, action, before/after and their diff (secrets redacted), and the revision of the deploy that applied it. Records are append-only.",
    auth: "org",
    permission: "compliance.read",
    query: Type.Object(AuditQuery, { additionalProperties: false }),
    list: "envelope",
    responses: { 200: { description: "Audit records", schema: Type.Array(AuditRecord) } },
    handler: async ({ deps, principal, query }) => {
      const q = query as AuditQueryValue & { limit?: number; offset?: number };
      const { rows, total } = await listAudit(deps.db, orgCaller(principal).orgId, filterOf(q), {
        limit: q.limit ?? 100,
        offset: q.offset ?? 0,
      });
      // Already one page: paginate() answers it as is, with the total.
      return new PageOf(rows, total);
    },
  }),

  defineRoute({
    method: "get",
    path: "/admin/audit",
    tag: TAG,
    summary: "The audit log of every org (admin), oldest first, filtered",
    description:
      "The admin's view of the same records: every org's, and those of actions on no single org (the DID pool's administration), which no org lists. `org_id` narrows it to one org; `no_org=true` to the records of no org.",
    auth: "admin",
    query: Type.Object(
      {
        ...AuditQuery,
        org_id: Type.Optional(UuidString),
        no_org: Type.Optional(Type.Boolean({ description: "only the records of no org" })),
      },
      { additionalProperties: false },
    ),
    list: "envelope",
    responses: { 200: { description: "Audit records", schema: Type.Array(AuditRecord) } },
    handler: async ({ deps, query }) => {
      const q = query as AuditQueryValue & {
        org_id?: string;
        no_org?: boolean;
        limit?: number;
        offset?: number;
      };
      const scope = q.no_org ? null : (q.org_id?.toLowerCase() ?? "*");
      const { rows, total } = await listAudit(deps.db, scope, filterOf(q), {
        limit: q.limit ?? 100,
        offset: q.offset ?? 0,
      });
      return new PageOf(rows, total);
    },
  }),

  defineRoute({
    method: "get",
    path: "/compliance/audit/export",
    tag: TAG,
    summary: "The org's audit log as NDJSON or CSV, streamed",
    description:
      "Same filters as the list; every matching record, oldest first. CSV follows RFC 4180 (header row, CRLF, quoted fields, quotes doubled; JSON columns as JSON text) and prefixes a field starting with = + - @ with ' so spreadsheets never run it.",
    auth: "org",
    permission: "compliance.read",
    query: Type.Object(
      {
        ...AuditQuery,
        format: Type.Optional(
          Type.Union([Type.Literal("ndjson"), Type.Literal("csv")], { default: "ndjson" }),
        ),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: {
        description: "The records",
        contentTypes: ["application/x-ndjson", "text/csv"],
        schema: Type.String(),
      },
    },
    handler: ({ deps, principal, query }) => {
      const format = query.format ?? "ndjson";
      const orgId = orgCaller(principal).orgId;
      const stream = Readable.from(auditExport(deps.db, orgId, filterOf(query), format));
      return reply(200, stream, {
        "content-type":
          format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="audit-${orgId}.${format}"`,
      });
    },
  }),

  defineRoute({
    method: "get",
    path: "/compliance/retention",
    tag: TAG,
    summary: "The org's retention policy: days kept per kind (null: forever)",
    auth: "org",
    permission: "compliance.read",
    responses: { 200: { description: "The policy", schema: RetentionPolicy } },
    handler: ({ deps, principal }) => getRetention(deps.db, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "put",
    path: "/compliance/retention",
    tag: TAG,
    summary: "Change the retention of some kinds (partial)",
    description: `Each kind keeps ${RETENTION_DAYS.minimum}-${RETENTION_DAYS.maximum} days, or null for ever. The daily purge of the server applies it; \`tickets\` is stored now and applies once tickets exist.`,
    auth: "org",
    permission: "compliance.write",
    body: RetentionChange,
    responses: { 200: { description: "The whole policy", schema: RetentionPolicy } },
    handler: ({ deps, principal, body }) =>
      setRetention(deps.db, orgCaller(principal).orgId, body, deps.clock()),
  }),

  defineRoute({
    method: "post",
    path: "/compliance/retention/purge",
    tag: TAG,
    summary: "Purge the org now by its policy (dry_run: count only)",
    auth: "org",
    permission: "compliance.write",
    body: Type.Object(
      { dry_run: Type.Optional(Type.Boolean({ default: false })) },
      { additionalProperties: false },
    ),
    responses: { 200: { description: "What was (or would be) deleted", schema: PurgeReport } },
    handler: ({ deps, principal, body }) =>
      purgeOrg(
        {
          db: deps.db,
          recordingsDir: deps.config.recordingsDir,
          nodesDir: deps.config.nodesDir,
        },
        orgCaller(principal).orgId,
        deps.clock(),
        body.dry_run ?? false,
      ),
  }),

  defineRoute({
    method: "get",
    path: "/compliance/consent",
    tag: TAG,
    summary: "The org's recording consent records, by phone",
    auth: "org",
    permission: "compliance.read",
    query: Type.Object(
      { phone: Type.Optional(Phone), recording_consent: Type.Optional(Consent) },
      { additionalProperties: false },
    ),
    list: "envelope",
    responses: { 200: { description: "Consent records", schema: Type.Array(ConsentRecord) } },
    handler: ({ deps, principal, query }) =>
      listConsentRecords(deps.db, orgCaller(principal).orgId, query),
  }),

  defineRoute({
    method: "post",
    path: "/compliance/consent",
    tag: TAG,
    summary: "Record a number's recording consent; a refused number is never recorded",
    description:
      "A refused number is kept out of recording in the org's dialplan (caller, or number dialled out) whatever the recording switch and user flags say; the change schedules a deploy. One record per number: delete it to record a new answer.",
    auth: "org",
    permission: "compliance.write",
    body: Type.Object(
      {
        phone: Phone,
        recording_consent: Consent,
        source: Type.String({
          minLength: 1,
          maxLength: 100,
          pattern: ONE_LINE,
          description: "where the answer was given: ivr, agent, web form...",
        }),
        recorded_at: Type.Optional(
          Type.String({ format: "date-time", description: "when it was given (default: now)" }),
        ),
      },
      { additionalProperties: false },
    ),
    responses: {
      201: { description: "The record", schema: ConsentRecord },
      409: { description: "The number already has a record" },
    },
    handler: async ({ deps, principal, body }) =>
      reply(201, await createConsentRecord(deps, orgCaller(principal).orgId, body, deps.clock())),
  }),

  defineRoute({
    method: "get",
    path: "/compliance/consent/{id}",
    tag: TAG,
    summary: "One consent record",
    auth: "org",
    permission: "compliance.read",
    params: IdParams,
    responses: { 200: { description: "The record", schema: ConsentRecord } },
    handler: ({ deps, principal, params }) =>
      getConsentRecord(deps.db, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "delete",
    path: "/compliance/consent/{id}",
    tag: TAG,
    summary: "Delete a consent record (a refused number is recorded again after the deploy)",
    auth: "org",
    permission: "compliance.write",
    params: IdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, principal, params }) => {
      await deleteConsentRecord(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),
];
