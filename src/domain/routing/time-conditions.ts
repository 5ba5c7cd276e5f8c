// Time conditions of an org (`/time-conditions`, issue 27 item 6): named business-hours
// schedules a DID, an IVR option or a queue timeout routes to. A schedule holds no extension;
// it is referred to by name, so a rename or a delete is refused while something routes to it.
// Every change: validate the org as it would be after it, write in one transaction with its
// `time_condition.*` webhook event, schedule the deploy.
import { randomUUID } from "node:crypto";
import { withDefaults } from "../../model/defaults.js";
import { type OrgState, TimeCondition } from "../../model/org-state.js";
import { isUniqueViolation } from "../../store/constraint-errors.js";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createTimeConditionRepository } from "../../store/time-condition-repository.js";
import { changeOrgConfig } from "../config/config-change.js";
import { assertBreaksNothingElse, assertValidAt } from "../config/config-validation.js";
import type { DomainDeps } from "../deps.js";
import { Conflict, NotFound } from "../errors.js";
import { ownRow } from "../tenant-rows.js";
import { emitEvent } from "../webhooks/webhook-events.js";

export const TIME_CONDITION_NOT_FOUND = "Time condition not found";

/** A time condition as the API shows it. */
export type TimeConditionView = TimeCondition & { id: string };

/** The fields a caller may set; on create, omitted ones take the model's defaults. */
export type TimeConditionInput = Partial<Omit<TimeCondition, "id">>;

/** What a create needs at least (the rest has defaults). */
export type TimeConditionCreate = TimeConditionInput &
  Pick<TimeCondition, "name" | "time_zone" | "open_destination_type" | "closed_destination_type">;

const EDITABLE = [
  "name",
  "description",
  "time_zone",
  "ranges",
  "exceptions",
  "open_destination_type",
  "open_destination",
  "closed_destination_type",
  "closed_destination",
] as const satisfies readonly (keyof TimeConditionInput)[];

function merge(base: TimeCondition, input: TimeConditionInput): TimeCondition {
  const next: Record<string, unknown> = { ...base };
  for (const key of EDITABLE) if (input[key] !== undefined) next[key] = input[key];
  return next as TimeCondition;
}

function alreadyExists(name: string): Conflict {
  return new Conflict(`Time condition '${name}' already exists`);
}

/** 409 when another time condition of the org has the name. */
function assertNameFree(state: OrgState, tc: TimeConditionView): void {
  if (state.time_conditions.some((t) => t.name === tc.name && t.id !== tc.id)) {
    throw alreadyExists(tc.name);
  }
}

/** The org's state, the time condition's index in it and the time condition (tenant-checked). */
async function loadOwn(
  db: Db,
  orgId: string,
  id: string,
): Promise<{ state: OrgState; index: number; tc: TimeConditionView }> {
  ownRow(await createTimeConditionRepository(db).findById(id), orgId, TIME_CONDITION_NOT_FOUND);
  const state = await loadOrgState(db, orgId);
  const index = state.time_conditions.findIndex((t) => t.id === id);
  const tc = state.time_conditions[index];
  if (!tc) throw new NotFound(TIME_CONDITION_NOT_FOUND);
  return { state, index, tc: { ...tc, id } };
}

async function save(
  deps: DomainDeps,
  orgId: string,
  name: string | undefined,
  write: (db: Db) => Promise<TimeConditionView>,
): Promise<TimeConditionView> {
  try {
    return await changeOrgConfig(deps, orgId, write);
  } catch (error) {
    // Two requests naming the same new schedule at once: the store's unique index decides.
    if (isUniqueViolation(error) && name !== undefined) throw alreadyExists(name);
    throw error;
  }
}

/** `GET /time-conditions`: the org's time conditions by name. */
export async function listTimeConditions(
  deps: DomainDeps,
  orgId: string,
): Promise<TimeConditionView[]> {
  return createTimeConditionRepository(deps.db).listByOrg(orgId);
}

/** `GET /time-conditions/{id}`: 404 when absent, 403 when another org's. */
export async function getTimeCondition(
  deps: DomainDeps,
  orgId: string,
  id: string,
): Promise<TimeConditionView> {
  const found = await createTimeConditionRepository(deps.db).findById(id);
  return ownRow(found, orgId, TIME_CONDITION_NOT_FOUND).timeCondition;
}

/** `POST /time-conditions`: a new schedule with the model's defaults; schedules a deploy. */
export async function createTimeCondition(
  deps: DomainDeps,
  orgId: string,
  input: TimeConditionCreate,
): Promise<TimeConditionView> {
  return save(deps, orgId, input.name, async (trx) => {
    const state = await loadOrgState(trx, orgId);
    const tc = {
      ...withDefaults(TimeCondition, merge({} as TimeCondition, input)),
      id: randomUUID(),
    };
    assertNameFree(state, tc);
    state.time_conditions.push(tc);
    assertValidAt(state, `time_conditions[${state.time_conditions.length - 1}]`);
    const created = await createTimeConditionRepository(trx, deps.clock).insert(orgId, tc);
    await emitEvent(
      trx,
      orgId,
      "time_condition.created",
      { time_condition: created },
      trx,
      deps.clock,
    );
    return created;
  });
}

/**
 * `PUT /time-conditions/{id}`: partial (ranges and exceptions are replaced whole). Refused with
 * 400 when a rename would break what routes to the old name.
 */
export async function updateTimeCondition(
  deps: DomainDeps,
  orgId: string,
  id: string,
  input: TimeConditionInput,
): Promise<TimeConditionView> {
  return save(deps, orgId, input.name, async (trx) => {
    const { state: before, index, tc: current } = await loadOwn(trx, orgId, id);
    const next = { ...merge(current, input), id };
    assertNameFree(before, next);
    const after = structuredClone(before);
    after.time_conditions[index] = next;
    assertValidAt(after, `time_conditions[${index}]`);
    assertBreaksNothingElse(
      before,
      after,
      `time_conditions[${index}]`,
      `Cannot change time condition '${current.name}'`,
    );
    await createTimeConditionRepository(trx, deps.clock).replace(id, next);
    await emitEvent(
      trx,
      orgId,
      "time_condition.updated",
      { time_condition: next },
      trx,
      deps.clock,
    );
    return next;
  });
}

/** `DELETE /time-conditions/{id}`: refused with 400 while a DID, IVR option or queue routes to it. */
export async function deleteTimeCondition(
  deps: DomainDeps,
  orgId: string,
  id: string,
): Promise<void> {
  await changeOrgConfig(deps, orgId, async (trx) => {
    const { state: before, tc } = await loadOwn(trx, orgId, id);
    const after = structuredClone(before);
    after.time_conditions = after.time_conditions.filter((t) => t.id !== id);
    assertBreaksNothingElse(before, after, null, `Cannot delete time condition '${tc.name}'`);
    await createTimeConditionRepository(trx, deps.clock).delete(id);
    await emitEvent(trx, orgId, "time_condition.deleted", { time_condition: tc }, trx, deps.clock);
  });
}
