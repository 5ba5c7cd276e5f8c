// CRM rows (migration 2501): leads and clients in `crm_records` (by `kind`), custom field
// definitions in `crm_fields`. Every read takes the org id first and filters on it.
import { sql } from "kysely";
import type {
  CrmFieldRecord,
  CrmFieldView,
  CrmKind,
  CrmRecord,
  CustomFieldType,
} from "../model/crm.js";
import type { Db } from "./database.js";
import { caseInsensitiveLike, storeDialect } from "./dialect.js";

export type { CrmKind };

/** The model's CrmRecord with its tags and custom values as JSON text. */
export type CrmRecordsTable = Omit<CrmRecord, "tags" | "custom"> & {
  /** JSON array of strings. */
  tags: string;
  /** JSON object of custom values by field name. */
  custom: string;
};

export interface CrmFieldsTable {
  id: string;
  org_id: string;
  name: string;
  label: string;
  type: string;
  /** JSON array of strings. */
  options: string;
  required: number;
  created_at: string;
}

export type CrmRecordRow = CrmRecordsTable;
export type CrmFieldRow = CrmFieldsTable;

export interface CrmFilters {
  /** Text found in the name, e-mail or company, or digits found in the phone. */
  q?: string;
  status?: string;
  owner?: string;
  tag?: string;
}

// LIKE with the user's `%`, `_` and `\` taken literally.
function likeOf(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The record's `tags` (a JSON array of strings) hold `tag`. */
function hasTag(db: Db, tag: string) {
  return storeDialect(db) === "postgres"
    ? sql<boolean>`exists (select 1 from json_array_elements_text(crm_records.tags::json) as t(value) where t.value = ${tag})`
    : sql<boolean>`exists (select 1 from json_each(crm_records.tags) where json_each.value = ${tag})`;
}

/** The record's `custom` (a JSON object) without the key `name`. */
function withoutCustomValue(db: Db, name: string) {
  return storeDialect(db) === "postgres"
    ? sql<string>`(custom::jsonb - ${name}::text)::text`
    : sql<string>`json_remove(custom, ${`$.${name}`})`;
}

function recordsOf(db: Db, orgId: string, kind: CrmKind, filters: CrmFilters) {
  let query = db
    .selectFrom("crm_records")
    .where("crm_records.org_id", "=", orgId)
    .where("crm_records.kind", "=", kind);
  if (filters.status) query = query.where("status", "=", filters.status);
  if (filters.owner) query = query.where("owner", "=", filters.owner);
  if (filters.tag) {
    const tag = filters.tag;
    query = query.where(hasTag(db, tag));
  }
  if (filters.q) {
    const like = likeOf(filters.q);
    const likeIgnoringCase = caseInsensitiveLike(db);
    const digits = filters.q.replace(/[^0-9]/g, "");
    query = query.where((eb) =>
      eb.or([
        eb(sql`name`, likeIgnoringCase, sql`${like} escape '\\'`),
        eb(sql`email`, likeIgnoringCase, sql`${like} escape '\\'`),
        eb(sql`company`, likeIgnoringCase, sql`${like} escape '\\'`),
        ...(digits.length > 0 ? [eb("phone", "like", `%${digits}%`)] : []),
      ]),
    );
  }
  return query;
}

// Leads and clients answer and take the model's CrmRecord: the JSON of tags and custom values
// stays here.
function recordOf(row: CrmRecordRow): CrmRecord {
  return { ...row, tags: JSON.parse(row.tags), custom: JSON.parse(row.custom) };
}

function columnsOf(record: CrmRecord): CrmRecordRow {
  return {
    ...record,
    tags: JSON.stringify(record.tags),
    custom: JSON.stringify(record.custom),
  };
}

/** One page of an org's leads or clients, oldest first, and how many match in all. */
export async function listCrmRecords(
  db: Db,
  orgId: string,
  kind: CrmKind,
  filters: CrmFilters,
  page: { limit: number; offset: number },
): Promise<{ rows: CrmRecord[]; total: number }> {
  const rows = await recordsOf(db, orgId, kind, filters)
    .selectAll()
    .orderBy("created_at")
    .orderBy("id")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const counted = await recordsOf(db, orgId, kind, filters)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return { rows: rows.map(recordOf), total: Number(counted.n) };
}

/** The row with this id, of any org (the caller checks the org). */
export async function findCrmRecord(db: Db, id: string): Promise<CrmRecord | undefined> {
  const row = await db
    .selectFrom("crm_records")
    .selectAll()
    .where("id", "=", id)
    .executeTakeFirst();
  return row && recordOf(row);
}

/** The org's leads and clients with this E.164 phone, oldest first (index org_id, phone). */
export async function crmRecordsByPhone(
  db: Db,
  orgId: string,
  phone: string,
): Promise<CrmRecord[]> {
  const rows = await db
    .selectFrom("crm_records")
    .selectAll()
    .where("org_id", "=", orgId)
    .where("phone", "=", phone)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map(recordOf);
}

export async function insertCrmRecord(db: Db, record: CrmRecord): Promise<void> {
  await db.insertInto("crm_records").values(columnsOf(record)).execute();
}

/** Replaces every editable column of the record `id` of `orgId`. */
export async function replaceCrmRecord(db: Db, record: CrmRecord): Promise<void> {
  const { id, org_id, kind: _kind, created_at: _created, ...columns } = columnsOf(record);
  await db
    .updateTable("crm_records")
    .set(columns)
    .where("id", "=", id)
    .where("org_id", "=", org_id)
    .execute();
}

export async function deleteCrmRecord(db: Db, orgId: string, id: string): Promise<void> {
  await db.deleteFrom("crm_records").where("id", "=", id).where("org_id", "=", orgId).execute();
}

// Custom fields answer and take the model's CrmFieldRecord: the options' JSON and the 0/1 flag
// stay here.
function fieldOf(row: CrmFieldRow): CrmFieldRecord {
  return {
    id: row.id,
    org_id: row.org_id,
    name: row.name,
    label: row.label,
    type: row.type as CustomFieldType,
    options: JSON.parse(row.options) as string[],
    required: row.required === 1,
    created_at: row.created_at,
  };
}

/** The org's custom field definitions in creation order. */
export async function listCrmFields(db: Db, orgId: string): Promise<CrmFieldRecord[]> {
  const rows = await db
    .selectFrom("crm_fields")
    .selectAll()
    .where("org_id", "=", orgId)
    .orderBy("created_at")
    .orderBy("name")
    .execute();
  return rows.map(fieldOf);
}

export async function findCrmField(db: Db, id: string): Promise<CrmFieldRecord | undefined> {
  const row = await db.selectFrom("crm_fields").selectAll().where("id", "=", id).executeTakeFirst();
  return row && fieldOf(row);
}

export async function insertCrmField(db: Db, field: CrmFieldRecord): Promise<void> {
  await db
    .insertInto("crm_fields")
    .values({
      ...field,
      options: JSON.stringify(field.options),
      required: field.required ? 1 : 0,
    })
    .execute();
}

export async function updateCrmField(
  db: Db,
  orgId: string,
  id: string,
  change: Partial<Pick<CrmFieldView, "label" | "options" | "required">>,
): Promise<void> {
  const columns: Partial<Pick<CrmFieldRow, "label" | "options" | "required">> = {};
  if (change.label !== undefined) columns.label = change.label;
  if (change.options !== undefined) columns.options = JSON.stringify(change.options);
  if (change.required !== undefined) columns.required = change.required ? 1 : 0;
  await db
    .updateTable("crm_fields")
    .set(columns)
    .where("id", "=", id)
    .where("org_id", "=", orgId)
    .execute();
}

/** Deletes a field definition and its value from every record of the org. */
export async function deleteCrmField(
  db: Db,
  orgId: string,
  field: Pick<CrmFieldView, "id" | "name">,
): Promise<void> {
  await db
    .deleteFrom("crm_fields")
    .where("id", "=", field.id)
    .where("org_id", "=", orgId)
    .execute();
  await db
    .updateTable("crm_records")
    .set({ custom: withoutCustomValue(db, field.name) })
    .where("org_id", "=", orgId)
    .execute();
}
