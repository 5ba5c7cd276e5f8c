// Queues of an org with their members, read and written in the OrgState shape.
import { randomUUID } from "node:crypto";
import type { Queue } from "../model/org-state.js";
import type { Db } from "./database.js";
import type { QueueMemberRow, QueueRow } from "./schema.js";

/** The OrgState queue described by a row and its member rows (already in order). */
export function queueFromRows(row: QueueRow, members: QueueMemberRow[]): Queue {
  return {
    id: row.id,
    number: row.number,
    name: row.name,
    strategy: row.strategy as Queue["strategy"],
    moh: row.moh,
    max_wait: row.max_wait,
    timeout_destination_type: row.timeout_destination_type as Queue["timeout_destination_type"],
    timeout_destination: row.timeout_destination,
    members: members.map((m) => ({
      extension: m.extension,
      penalty: m.penalty,
      ring_time: m.ring_time,
    })),
  };
}

/** Repository of queues over a database or a transaction. */
export function createQueueRepository(db: Db) {
  return {
    /** Inserts a queue and its members in list order; returns it with its id. */
    async insert(orgId: string, queue: Queue): Promise<Queue & { id: string }> {
      const id = queue.id ?? randomUUID();
      const now = new Date().toISOString();
      await db
        .insertInto("queues")
        .values({
          id,
          org_id: orgId,
          number: queue.number,
          name: queue.name,
          strategy: queue.strategy,
          moh: queue.moh,
          max_wait: queue.max_wait,
          timeout_destination_type: queue.timeout_destination_type,
          timeout_destination: queue.timeout_destination,
          created_at: now,
          updated_at: now,
        })
        .execute();
      if (queue.members.length > 0) {
        await db
          .insertInto("queue_members")
          .values(
            queue.members.map((m, position) => ({
              id: randomUUID(),
              queue_id: id,
              extension: m.extension,
              penalty: m.penalty,
              ring_time: m.ring_time,
              position,
            })),
          )
          .execute();
      }
      return { ...queue, id };
    },

    /** Queues of the org ordered by number, members in their stored order. */
    async listByOrg(orgId: string): Promise<Queue[]> {
      const rows = await db
        .selectFrom("queues")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("number")
        .execute();
      if (rows.length === 0) return [];
      const members = await db
        .selectFrom("queue_members")
        .selectAll()
        .where(
          "queue_id",
          "in",
          rows.map((r) => r.id),
        )
        .orderBy("queue_id")
        .orderBy("position")
        .execute();
      return rows.map((row) =>
        queueFromRows(
          row,
          members.filter((m) => m.queue_id === row.id),
        ),
      );
    },
  };
}

export type QueueRepository = ReturnType<typeof createQueueRepository>;
