// Time conditions (business-hours schedules) of an org, read and written in the OrgState shape.
// Ranges and exceptions are stored as JSON: they are only ever read and written with their
// schedule, and the model validated them before they got here.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../clock.js";
import type { TimeCondition } from "../model/org-state.js";
import type { Db } from "./database.js";
import type { TimeConditionRow } from "./schema.js";

type DestinationType = TimeCondition["open_destination_type"];

/** The OrgState time condition a row describes. */
export function timeConditionFromRow(row: TimeConditionRow): TimeCondition & { id: string } {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    time_zone: row.time_zone,
    ranges: JSON.parse(row.ranges) as TimeCondition["ranges"],
    exceptions: JSON.parse(row.exceptions) as TimeCondition["exceptions"],
    open_destination_type: row.open_destination_type as DestinationType,
    open_destination: row.open_destination,
    closed_destination_type: row.closed_destination_type as DestinationType,
    closed_destination: row.closed_destination,
  };
}

/** The columns a time condition's fields are stored in (insert and replace alike). */
function timeConditionColumns(tc: TimeCondition) {
  return {
    name: tc.name,
    description: tc.description,
    time_zone: tc.time_zone,
    ranges: JSON.stringify(tc.ranges),
    exceptions: JSON.stringify(tc.exceptions),
    open_destination_type: tc.open_destination_type,
    open_destination: tc.open_destination,
    closed_destination_type: tc.closed_destination_type,
    closed_destination: tc.closed_destination,
  };
}

/** Repository of time conditions over a database or a transaction. */
export function createTimeConditionRepository(db: Db, clock: Clock = systemClock) {
  return {
    /** Inserts a time condition; returns it with its id. */
    async insert(orgId: string, tc: TimeCondition): Promise<TimeCondition & { id: string }> {
      const id = tc.id ?? randomUUID();
      const now = clock().toISOString();
      await db
        .insertInto("time_conditions")
        .values({
          id,
          org_id: orgId,
          ...timeConditionColumns(tc),
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { ...tc, id };
    },

    /** The time condition `id` and its owner, whoever owns it (callers check the owner). */
    async findById(
      id: string,
    ): Promise<{ org_id: string; timeCondition: TimeCondition & { id: string } } | undefined> {
      const row = await db
        .selectFrom("time_conditions")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return row && { org_id: row.org_id, timeCondition: timeConditionFromRow(row) };
    },

    /** Rewrites every field of time condition `id` with `tc`. */
    async replace(id: string, tc: TimeCondition): Promise<void> {
      await db
        .updateTable("time_conditions")
        .set({ ...timeConditionColumns(tc), updated_at: clock().toISOString() })
        .where("id", "=", id)
        .execute();
    },

    /** Deletes time condition `id` (callers make sure nothing routes to it). */
    async delete(id: string): Promise<void> {
      await db.deleteFrom("time_conditions").where("id", "=", id).execute();
    },

    /** Time conditions of the org ordered by name. */
    async listByOrg(orgId: string): Promise<(TimeCondition & { id: string })[]> {
      const rows = await db
        .selectFrom("time_conditions")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("name")
        .execute();
      return rows.map(timeConditionFromRow);
    },
  };
}

export type TimeConditionRepository = ReturnType<typeof createTimeConditionRepository>;
