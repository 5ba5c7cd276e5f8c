// Queues of an org with their members, read and written in the OrgState shape.
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../clock.js";
import type { Queue, QueueMember } from "../model/org-state.js";
import type { Db } from "./database.js";
import { deleteOwnedWithChildren, updateOwned } from "./owned-rows.js";
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
/** The columns a queue's own fields are stored in (insert and update write the same ones). */
function queueColumns(queue: Queue) {
  return {
    number: queue.number,
    name: queue.name,
    strategy: queue.strategy,
    moh: queue.moh,
    max_wait: queue.max_wait,
    timeout_destination_type: queue.timeout_destination_type,
    timeout_destination: queue.timeout_destination,
  };
}

export function createQueueRepository(db: Db, clock: Clock = systemClock) {
  return {
    /** Inserts a queue and its members in list order; returns it with its id. */
    async insert(orgId: string, queue: Queue): Promise<Queue & { id: string }> {
      const id = queue.id ?? randomUUID();
      const now = clock().toISOString();
      await db
        .insertInto("queues")
        .values({
          id,
          org_id: orgId,
          ...queueColumns(queue),
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

    /** The row of queue `id` whatever org owns it (callers check the owner for tenant rules). */
    async findRowById(id: string): Promise<QueueRow | undefined> {
      return db.selectFrom("queues").selectAll().where("id", "=", id).executeTakeFirst();
    },

    /** Rewrites the queue's own fields (not its members) from `queue`; true when a row changed. */
    async update(orgId: string, id: string, queue: Queue): Promise<boolean> {
      const columns = { ...queueColumns(queue), updated_at: clock().toISOString() };
      return updateOwned(db, "queues", orgId, id, columns);
    },

    /** Deletes queue `id` of the org and its members; true when the queue existed. */
    async delete(orgId: string, id: string): Promise<boolean> {
      return deleteOwnedWithChildren(db, "queues", orgId, id);
    },

    /** Appends a member after the queue's current last one. */
    async addMember(queueId: string, member: QueueMember): Promise<void> {
      const last = await db
        .selectFrom("queue_members")
        .select((eb) => eb.fn.max("position").as("position"))
        .where("queue_id", "=", queueId)
        .executeTakeFirst();
      const position =
        last?.position === null || last?.position === undefined ? 0 : Number(last.position) + 1;
      await db
        .insertInto("queue_members")
        .values({
          id: randomUUID(),
          queue_id: queueId,
          extension: member.extension,
          penalty: member.penalty,
          ring_time: member.ring_time,
          position,
        })
        .execute();
    },

    /** Replaces every member of the queue with `members`, in that order. */
    async replaceMembers(queueId: string, members: readonly QueueMember[]): Promise<void> {
      await db.deleteFrom("queue_members").where("queue_id", "=", queueId).execute();
      for (const member of members) await this.addMember(queueId, member);
    },

    /** Sets a member's penalty and ring time; true when the member exists. */
    async updateMember(queueId: string, member: QueueMember): Promise<boolean> {
      const result = await db
        .updateTable("queue_members")
        .set({ penalty: member.penalty, ring_time: member.ring_time })
        .where("queue_id", "=", queueId)
        .where("extension", "=", member.extension)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Removes a member; true when it existed. */
    async removeMember(queueId: string, extension: string): Promise<boolean> {
      const result = await db
        .deleteFrom("queue_members")
        .where("queue_id", "=", queueId)
        .where("extension", "=", extension)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Removes user `extension` from every queue of the org (the user is going away). */
    async removeMemberships(orgId: string, extension: string): Promise<void> {
      await db
        .deleteFrom("queue_members")
        .where("extension", "=", extension)
        .where("queue_id", "in", (eb) =>
          eb.selectFrom("queues").select("id").where("org_id", "=", orgId),
        )
        .execute();
    },

    /**
     * Follows a user's extension change: memberships and `user` timeout destinations naming
     * `from` now name `to`.
     */
    async renameUserExtension(orgId: string, from: string, to: string): Promise<void> {
      await db
        .updateTable("queue_members")
        .set({ extension: to })
        .where("extension", "=", from)
        .where("queue_id", "in", (eb) =>
          eb.selectFrom("queues").select("id").where("org_id", "=", orgId),
        )
        .execute();
      await db
        .updateTable("queues")
        .set({ timeout_destination: to })
        .where("org_id", "=", orgId)
        .where("timeout_destination_type", "=", "user")
        .where("timeout_destination", "=", from)
        .execute();
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
