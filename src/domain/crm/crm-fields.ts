// Custom fields of an org's CRM (`/crm/fields`, permission `crm.customize`): the definitions,
// and the check every write of a lead or client passes (types, enum options, required fields).
import { randomUUID } from "node:crypto";
import type {
  CrmFieldRecord,
  CrmFieldView,
  CustomFieldType,
  CustomValueType,
} from "../../model/crm.js";
import { ONE_LINE } from "../../model/org-state.js";
import { isUniqueViolation } from "../../store/constraint-errors.js";
import {
  deleteCrmField,
  findCrmField,
  insertCrmField,
  listCrmFields,
  updateCrmField,
} from "../../store/crm-repository.js";
import type { Db } from "../../store/database.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, Conflict } from "../errors.js";
import { ownRow } from "../tenant-rows.js";

export interface CrmFieldInput {
  name: string;
  label?: string;
  type: CustomFieldType;
  options?: string[];
  required?: boolean;
}

/** A field as the API shows it: the stored field without its org. */
export function fieldView(field: CrmFieldRecord): CrmFieldView {
  const { org_id: _org, ...view } = field;
  return view;
}

function checkOptions(type: CustomFieldType, options: readonly string[] | undefined): string[] {
  if (type === "enum") {
    if (!options || options.length === 0) {
      throw new BadRequest("options must list at least one value for an enum field");
    }
    if (new Set(options).size !== options.length) throw new BadRequest("options must be unique");
    return [...options];
  }
  if (options && options.length > 0) {
    throw new BadRequest(`options are only allowed for enum fields (type is ${type})`);
  }
  return [];
}

/** `GET /crm/fields`: the org's custom fields in creation order. */
export async function listFields(deps: DomainDeps, orgId: string): Promise<CrmFieldView[]> {
  return (await listCrmFields(deps.db, orgId)).map(fieldView);
}

/** `POST /crm/fields`: a new custom field; its name is unique in the org (409). */
export async function createField(
  deps: DomainDeps,
  orgId: string,
  input: CrmFieldInput,
): Promise<CrmFieldView> {
  const field: CrmFieldRecord = {
    id: randomUUID(),
    org_id: orgId,
    name: input.name,
    label: input.label ?? input.name,
    type: input.type,
    options: checkOptions(input.type, input.options),
    required: input.required === true,
    created_at: deps.clock().toISOString(),
  };
  try {
    await insertCrmField(deps.db, field);
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict(`Custom field ${input.name} already exists`);
    throw error;
  }
  return fieldView(field);
}

async function ownField(db: Db, orgId: string, id: string): Promise<CrmFieldRecord> {
  return ownRow(await findCrmField(db, id), orgId, "Custom field not found");
}

/** `GET /crm/fields/{id}`. */
export async function getField(deps: DomainDeps, orgId: string, id: string): Promise<CrmFieldView> {
  return fieldView(await ownField(deps.db, orgId, id));
}

/**
 * `PUT /crm/fields/{id}`: label, enum options and `required` may change; name and type may not
 * (stored values would silently change meaning: delete and recreate the field instead).
 */
export async function updateField(
  deps: DomainDeps,
  orgId: string,
  id: string,
  input: { label?: string; options?: string[]; required?: boolean },
): Promise<CrmFieldView> {
  const current = fieldView(await ownField(deps.db, orgId, id));
  await updateCrmField(deps.db, orgId, id, {
    ...(input.label !== undefined ? { label: input.label } : {}),
    ...(input.options !== undefined ? { options: checkOptions(current.type, input.options) } : {}),
    ...(input.required !== undefined ? { required: input.required } : {}),
  });
  return getField(deps, orgId, id);
}

/** `DELETE /crm/fields/{id}`: the definition and its value in every record of the org. */
export async function deleteField(deps: DomainDeps, orgId: string, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await deleteCrmField(trx, orgId, await ownField(trx, orgId, id));
  });
}

// Same rule as the model's ONE_LINE pattern: no control characters.
const ONE_LINE_TEXT = new RegExp(ONE_LINE);

function isCalendarDate(value: string): boolean {
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

function valueProblem(field: CrmFieldView, value: CustomValueType): string | undefined {
  const at = `custom_fields.${field.name}`;
  switch (field.type) {
    case "string":
      return typeof value === "string" && value.length <= 1000 && ONE_LINE_TEXT.test(value)
        ? undefined
        : `${at} must be a one-line string of at most 1000 characters`;
    case "number":
      return typeof value === "number" && Number.isFinite(value)
        ? undefined
        : `${at} must be a number`;
    case "boolean":
      return typeof value === "boolean" ? undefined : `${at} must be true or false`;
    case "date":
      return typeof value === "string" && isCalendarDate(value)
        ? undefined
        : `${at} must be a date (YYYY-MM-DD)`;
    case "enum":
      return typeof value === "string" && field.options.includes(value)
        ? undefined
        : `${at} must be one of: ${field.options.join(", ")}`;
  }
}

/**
 * The custom values of a record after a write: `current` with `changes` applied (a null value
 * removes the field). Throws one 400 listing every problem: unknown fields, values of the wrong
 * type or outside an enum's options, and required fields left without a value.
 */
export function mergeCustomValues(
  fields: readonly CrmFieldView[],
  current: Readonly<Record<string, CustomValueType>>,
  changes: Readonly<Record<string, CustomValueType | null>> | undefined,
): Record<string, CustomValueType> {
  const merged: Record<string, CustomValueType> = { ...current };
  const byName = new Map(fields.map((f) => [f.name, f]));
  const problems: string[] = [];
  const badValues = new Set<string>();
  for (const [name, value] of Object.entries(changes ?? {})) {
    const field = byName.get(name);
    if (!field) {
      problems.push(`Unknown custom field: ${name}`);
      continue;
    }
    if (value === null) {
      delete merged[name];
      continue;
    }
    const problem = valueProblem(field, value);
    if (problem) {
      problems.push(problem);
      badValues.add(name);
    } else merged[name] = value;
  }
  for (const field of fields) {
    if (field.required && merged[field.name] === undefined && !badValues.has(field.name)) {
      problems.push(`custom_fields.${field.name} is required`);
    }
  }
  if (problems.length > 0) throw new BadRequest(problems.join("; "));
  return merged;
}
