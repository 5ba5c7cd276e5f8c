// Leads and clients of an org (`/crm/leads`, `/crm/clients`): validate -> write (one
// transaction, with the `crm.*` webhook events in the outbox) -> answer. Phones are stored in
// E.164 so a call's number finds its contact through one indexed lookup; another org's record is
// 403 `Access denied` (ownRow).
import { randomUUID } from "node:crypto";
import type {
  CrmClientView,
  CrmFieldView,
  CrmLeadView,
  CrmRecord,
  CustomValueType,
  LeadStatus,
} from "../../model/crm.js";
import { didAliases, digitsOnly, toE164 } from "../../model/phone.js";
import { badPhoneNumberMessage, looksLikePhoneNumber } from "../../model/validate.js";
import {
  type CrmFilters,
  type CrmKind,
  crmRecordsByPhone,
  deleteCrmRecord,
  findCrmRecord,
  insertCrmRecord,
  listCrmFields,
  listCrmRecords,
  replaceCrmRecord,
} from "../../store/crm-repository.js";
import type { Db } from "../../store/database.js";
import { callHistory } from "../calls/calls.js";
import type { LiveCallsView } from "../calls/live-calls.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict, NotFound } from "../errors.js";
import { ownRow } from "../tenant-rows.js";
import { emitEvent } from "../webhooks/webhook-events.js";
import { fieldView, mergeCustomValues } from "./crm-fields.js";

export type { CrmKind };

export interface CrmRecordInput {
  name?: string;
  phone?: string | null;
  email?: string | null;
  company?: string | null;
  status?: LeadStatus;
  owner?: string | null;
  tags?: string[];
  notes?: string;
  custom_fields?: Record<string, CustomValueType | null>;
}

export type CrmView = CrmLeadView | CrmClientView;

const NOT_FOUND: Record<CrmKind, string> = {
  lead: "Lead not found",
  client: "Client not found",
};

/** The record as the API and the webhook events show it. */
export function crmView(row: CrmRecord): CrmView {
  const common = {
    id: row.id,
    name: row.name,
    phone: row.phone,
    email: row.email,
    company: row.company,
    owner: row.owner,
    tags: row.tags,
    notes: row.notes,
    custom_fields: row.custom,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
  return row.kind === "lead"
    ? { ...common, status: row.status as LeadStatus, client_id: row.linked_id }
    : { ...common, lead_id: row.linked_id };
}

/**
 * A phone as the store keeps it: spaces, dashes, dots and brackets dropped, then 7-15 digits
 * with an optional `+` (SPEC.md §7's message otherwise), written in E.164 (a local Indian
 * `0` + 10 digits becomes `+91`...).
 */
export function normalisePhone(value: string): string {
  const compact = value.replace(/[\s().-]/g, "");
  if (!looksLikePhoneNumber(compact)) throw new BadRequest(badPhoneNumberMessage(value));
  return toE164(compact);
}

async function ownRecord(db: Db, orgId: string, kind: CrmKind, id: string): Promise<CrmRecord> {
  const row = ownRow(await findCrmRecord(db, id), orgId, NOT_FOUND[kind]);
  // A lead's id on the clients path (or the other way round) names no record there.
  if (row.kind !== kind) throw new NotFound(NOT_FOUND[kind]);
  return row;
}

async function fieldsOf(db: Db, orgId: string): Promise<CrmFieldView[]> {
  return (await listCrmFields(db, orgId)).map(fieldView);
}

// The row after applying `input` to `base`; every value checked.
function applyInput(
  base: CrmRecord,
  input: CrmRecordInput,
  fields: readonly CrmFieldView[],
): CrmRecord {
  const row = { ...base };
  if (input.name !== undefined) row.name = input.name;
  if (input.phone !== undefined)
    row.phone = input.phone === null ? null : normalisePhone(input.phone);
  if (input.email !== undefined)
    row.email = input.email === null ? null : input.email.toLowerCase();
  if (input.company !== undefined) row.company = input.company;
  if (input.owner !== undefined) row.owner = input.owner;
  if (input.notes !== undefined) row.notes = input.notes;
  if (input.tags !== undefined) row.tags = [...new Set(input.tags)];
  if (input.status !== undefined) {
    if (base.kind !== "lead") throw new BadRequest("status is only for leads");
    row.status = input.status;
  }
  row.custom = mergeCustomValues(fields, base.custom, input.custom_fields);
  return row;
}

/** The columns whose value differs, by their API names. */
function changedFields(before: CrmRecord, after: CrmRecord): string[] {
  const names: Array<[keyof CrmRecord, string]> = [
    ["name", "name"],
    ["phone", "phone"],
    ["email", "email"],
    ["company", "company"],
    ["status", "status"],
    ["owner", "owner"],
    ["tags", "tags"],
    ["notes", "notes"],
    ["custom", "custom_fields"],
    ["linked_id", before.kind === "lead" ? "client_id" : "lead_id"],
  ];
  // Compared as JSON: tags and custom values are a list and an object.
  return names
    .filter(([column]) => JSON.stringify(before[column]) !== JSON.stringify(after[column]))
    .map(([, name]) => name);
}

export interface CrmListQuery extends CrmFilters {
  limit?: number;
  offset?: number;
}

/** `GET /crm/leads|clients`: one page (oldest first) with search and filters, and the total. */
export async function listRecords(
  deps: DomainDeps,
  orgId: string,
  kind: CrmKind,
  query: CrmListQuery,
): Promise<{ rows: CrmView[]; total: number }> {
  const { limit = 100, offset = 0, ...filters } = query;
  if (filters.status && kind !== "lead") throw new BadRequest("status is only for leads");
  const { rows, total } = await listCrmRecords(deps.db, orgId, kind, filters, { limit, offset });
  return { rows: rows.map(crmView), total };
}

/** `GET /crm/leads|clients/{id}`. */
export async function getRecord(
  deps: DomainDeps,
  orgId: string,
  kind: CrmKind,
  id: string,
): Promise<CrmView> {
  return crmView(await ownRecord(deps.db, orgId, kind, id));
}

/** `POST /crm/leads|clients`: emits `crm.lead.created` / `crm.client.created` with the record. */
export async function createRecord(
  deps: DomainDeps,
  orgId: string,
  kind: CrmKind,
  input: CrmRecordInput & { name: string },
): Promise<CrmView> {
  const now = deps.clock().toISOString();
  const empty: CrmRecord = {
    id: randomUUID(),
    org_id: orgId,
    kind,
    name: input.name,
    phone: null,
    email: null,
    company: null,
    status: kind === "lead" ? "new" : null,
    owner: null,
    tags: [],
    notes: "",
    custom: {},
    linked_id: null,
    created_at: now,
    updated_at: now,
  };
  return deps.db.transaction().execute(async (trx) => {
    const row = applyInput(empty, input, await fieldsOf(trx, orgId));
    await insertCrmRecord(trx, row);
    const view = crmView(row);
    await emitEvent(trx, orgId, `crm.${kind}.created`, { [kind]: view }, trx, deps.clock);
    return view;
  });
}

// Writes `after` and emits `crm.<kind>.updated` (and `crm.lead.status_changed`) when it changed.
async function writeChange(
  trx: Db,
  deps: DomainDeps,
  before: CrmRecord,
  after: CrmRecord,
): Promise<CrmRecord> {
  const changes = changedFields(before, after);
  if (changes.length === 0) return before;
  const row = { ...after, updated_at: deps.clock().toISOString() };
  await replaceCrmRecord(trx, row);
  const view = crmView(row);
  await emitEvent(
    trx,
    row.org_id,
    `crm.${row.kind}.updated`,
    { [row.kind]: view, changes },
    trx,
    deps.clock,
  );
  if (row.kind === "lead" && before.status !== row.status) {
    await emitEvent(
      trx,
      row.org_id,
      "crm.lead.status_changed",
      { lead: view, from: before.status, to: row.status },
      trx,
      deps.clock,
    );
  }
  return row;
}

/**
 * `PUT /crm/leads|clients/{id}`: partial; `custom_fields` merge into the stored values (null
 * removes one). Emits `crm.<kind>.updated` with the changed field names when anything changed,
 * and `crm.lead.status_changed` when a lead's status did.
 */
export async function updateRecord(
  deps: DomainDeps,
  orgId: string,
  kind: CrmKind,
  id: string,
  input: CrmRecordInput,
): Promise<CrmView> {
  return deps.db.transaction().execute(async (trx) => {
    const before = await ownRecord(trx, orgId, kind, id);
    const after = applyInput(before, input, await fieldsOf(trx, orgId));
    return crmView(await writeChange(trx, deps, before, after));
  });
}

/** `DELETE /crm/leads|clients/{id}` (SPEC.md §6 names no event for it: none is sent). */
export async function deleteRecord(
  deps: DomainDeps,
  orgId: string,
  kind: CrmKind,
  id: string,
): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await ownRecord(trx, orgId, kind, id);
    await deleteCrmRecord(trx, orgId, id);
  });
}

/**
 * `POST /crm/leads/{id}/convert`: a new client with the lead's fields (custom values checked
 * against today's definitions), linked both ways; the lead becomes `won`. Emits
 * `crm.client.created`, `crm.lead.updated` and (unless it was already won) `crm.lead.status_changed`.
 * A lead converts once (409 after).
 */
export async function convertLead(
  deps: DomainDeps,
  orgId: string,
  id: string,
): Promise<{ lead: CrmLeadView; client: CrmClientView }> {
  return deps.db.transaction().execute(async (trx) => {
    const lead = await ownRecord(trx, orgId, "lead", id);
    if (lead.linked_id !== null) {
      throw new Conflict(`Lead ${id} was already converted to client ${lead.linked_id}`);
    }
    const now = deps.clock().toISOString();
    const fields = await fieldsOf(trx, orgId);
    const client: CrmRecord = {
      ...lead,
      id: randomUUID(),
      kind: "client",
      status: null,
      custom: mergeCustomValues(fields, lead.custom, {}),
      linked_id: lead.id,
      created_at: now,
      updated_at: now,
    };
    await insertCrmRecord(trx, client);
    const clientView = crmView(client) as CrmClientView;
    await emitEvent(trx, orgId, "crm.client.created", { client: clientView }, trx, deps.clock);
    const won = await writeChange(trx, deps, lead, {
      ...lead,
      status: "won",
      linked_id: client.id,
    });
    return { lead: crmView(won) as CrmLeadView, client: clientView };
  });
}

/**
 * `GET /crm/leads|clients/{id}/calls`: the org's calls with a leg from or to the record's
 * phone, under every form the engine may have written it (E.164, international, local).
 */
export async function callsOfRecord(
  deps: DomainDeps & { liveCalls: LiveCallsView },
  orgId: string,
  kind: CrmKind,
  id: string,
  page: { limit?: number; offset?: number },
) {
  const row = await ownRecord(deps.db, orgId, kind, id);
  const numbers =
    row.phone === null ? [] : [...new Set([...didAliases(row.phone), digitsOnly(row.phone)])];
  return callHistory({ db: deps.db, live: deps.liveCalls }, orgId, { ...page, numbers });
}

/** The org's leads and clients whose phone is this number (any written form): a call's contacts. */
export async function contactsOfNumber(
  deps: DomainDeps,
  orgId: string,
  number: string,
): Promise<CrmView[]> {
  return (await crmRecordsByPhone(deps.db, orgId, normalisePhone(number))).map(crmView);
}
