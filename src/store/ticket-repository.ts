// Tickets and their history of changes (migration 2401). Every read takes the org id first.
// It answers and takes the model's Ticket and TicketHistoryView; a change's JSON stays here.
import type {
  Ticket,
  TicketHistoryView,
  TicketPriority,
  TicketSource,
  TicketStatus,
} from "../model/tickets.js";
import type { Db } from "./database.js";
import { caseInsensitiveLike } from "./dialect.js";

export interface TicketFilters {
  status?: TicketStatus;
  source?: TicketSource;
  priority?: TicketPriority;
  /** Digits found in the caller's number. */
  phone?: string;
  /** ISO 8601 UTC bounds on the creation time, `from` inclusive, `to` exclusive. */
  from?: string;
  to?: string;
}

export type TicketChange = Partial<Pick<Ticket, "status" | "priority" | "assignee" | "note">>;

/** The ticket store over a database or a transaction. */
export function createTicketRepository(db: Db) {
  const matching = (orgId: string, filters: TicketFilters) => {
    let query = db.selectFrom("tickets").where("org_id", "=", orgId);
    if (filters.status) query = query.where("status", "=", filters.status);
    if (filters.source) query = query.where("source", "=", filters.source);
    if (filters.priority) query = query.where("priority", "=", filters.priority);
    if (filters.phone) query = query.where("phone", caseInsensitiveLike(db), `%${filters.phone}%`);
    if (filters.from) query = query.where("created_at", ">=", filters.from);
    if (filters.to) query = query.where("created_at", "<", filters.to);
    return query;
  };

  return {
    /** One page of an org's tickets, newest first, and how many match in all. */
    async list(
      orgId: string,
      filters: TicketFilters,
      page: { limit: number; offset: number },
    ): Promise<{ rows: Ticket[]; total: number }> {
      const rows = await matching(orgId, filters)
        .selectAll()
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .limit(page.limit)
        .offset(page.offset)
        .execute();
      const counted = await matching(orgId, filters)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return { rows, total: Number(counted.n) };
    },

    /** The ticket with this id, whatever its org (the caller checks ownership). */
    findById(id: string): Promise<Ticket | undefined> {
      return db.selectFrom("tickets").selectAll().where("id", "=", id).executeTakeFirst();
    },

    /** The org's oldest ticket of `phone` that is not closed (the repeat caller's). */
    findOpenByPhone(orgId: string, phone: string): Promise<Ticket | undefined> {
      return db
        .selectFrom("tickets")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("phone", "=", phone)
        .where("status", "!=", "closed")
        .orderBy("created_at")
        .orderBy("id")
        .executeTakeFirst();
    },

    /** Whether the org has a ticket of `phone` created at or after `since`. */
    async existsForPhoneSince(orgId: string, phone: string, since: string): Promise<boolean> {
      const row = await db
        .selectFrom("tickets")
        .select("id")
        .where("org_id", "=", orgId)
        .where("phone", "=", phone)
        .where("created_at", ">=", since)
        .executeTakeFirst();
      return row !== undefined;
    },

    async insert(row: Ticket): Promise<void> {
      await db.insertInto("tickets").values(row).execute();
    },

    async update(id: string, change: TicketChange, updatedAt: string): Promise<void> {
      await db
        .updateTable("tickets")
        .set({ ...change, updated_at: updatedAt })
        .where("id", "=", id)
        .execute();
    },

    async addHistory(ticketId: string, entry: TicketHistoryView): Promise<void> {
      await db
        .insertInto("ticket_history")
        .values({ ticket_id: ticketId, ...entry, changes: JSON.stringify(entry.changes) })
        .execute();
    },

    /** A ticket's changes, oldest first. */
    async historyOf(ticketId: string): Promise<TicketHistoryView[]> {
      const rows = await db
        .selectFrom("ticket_history")
        .select(["at", "actor", "action", "changes"])
        .where("ticket_id", "=", ticketId)
        .orderBy("id")
        .execute();
      return rows.map((row) => ({ ...row, changes: JSON.parse(row.changes) }));
    },

    /**
     * Deletes the org's tickets created before `cutoff` (ISO 8601 UTC), with their history and
     * messages; for a retention policy. Resolves with how many tickets went.
     */
    /** How many of the org's tickets were created before `cutoff` (a purge's dry run). */
    async countOlderThan(orgId: string, cutoff: string): Promise<number> {
      const row = await db
        .selectFrom("tickets")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("org_id", "=", orgId)
        .where("created_at", "<", cutoff)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async deleteOlderThan(orgId: string, cutoff: string): Promise<number> {
      const old = db
        .selectFrom("tickets")
        .select("id")
        .where("org_id", "=", orgId)
        .where("created_at", "<", cutoff);
      await db.deleteFrom("ticket_messages").where("ticket_id", "in", old).execute();
      await db.deleteFrom("ticket_history").where("ticket_id", "in", old).execute();
      const result = await db
        .deleteFrom("tickets")
        .where("org_id", "=", orgId)
        .where("created_at", "<", cutoff)
        .executeTakeFirst();
      return Number(result.numDeletedRows ?? 0);
    },
  };
}

export type TicketRepository = ReturnType<typeof createTicketRepository>;
