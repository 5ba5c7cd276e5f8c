// The ticket-opened message outbox, the messaging provider's settings and each org's ticket
// messaging config (migration 2401).
import type { TicketMessage } from "../model/tickets.js";
import type { Db } from "./database.js";
import type { MessagingProviderTable, TicketMessagingConfigTable } from "./ticket-tables.js";

const PROVIDER = "whatsapp";

export function createTicketMessageRepository(db: Db) {
  return {
    async enqueue(
      row: Pick<TicketMessage, "id" | "org_id" | "ticket_id" | "kind" | "target_url" | "body"> & {
        at: string;
      },
    ): Promise<void> {
      await db
        .insertInto("ticket_messages")
        .values({
          id: row.id,
          org_id: row.org_id,
          ticket_id: row.ticket_id,
          kind: row.kind,
          target_url: row.target_url,
          body: row.body,
          status: "pending",
          attempts: 0,
          next_attempt_at: row.at,
          last_status: null,
          last_error: null,
          created_at: row.at,
          updated_at: row.at,
        })
        .execute();
    },

    due(now: string, limit: number): Promise<TicketMessage[]> {
      return db
        .selectFrom("ticket_messages")
        .selectAll()
        .where("status", "=", "pending")
        .where("next_attempt_at", "<=", now)
        .orderBy("created_at")
        .orderBy("id")
        .limit(limit)
        .execute();
    },

    ofTicket(ticketId: string): Promise<TicketMessage[]> {
      return db
        .selectFrom("ticket_messages")
        .selectAll()
        .where("ticket_id", "=", ticketId)
        .orderBy("created_at")
        .orderBy("kind")
        .execute();
    },

    /**
     * Takes a due row for one attempt: true for exactly one caller, so two processes sharing the
     * store (the server and `intake serve`) never send the same message twice at once.
     */
    async claim(id: string, attempts: number, until: string): Promise<boolean> {
      const result = await db
        .updateTable("ticket_messages")
        .set({ attempts: attempts + 1, next_attempt_at: until })
        .where("id", "=", id)
        .where("status", "=", "pending")
        .where("attempts", "=", attempts)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async record(
      id: string,
      outcome: {
        status: "pending" | "sent" | "failed";
        attempts: number;
        lastStatus: number | null;
        lastError: string | null;
        nextAttemptAt: string;
        at: string;
      },
    ): Promise<void> {
      await db
        .updateTable("ticket_messages")
        .set({
          status: outcome.status,
          attempts: outcome.attempts,
          last_status: outcome.lastStatus,
          last_error: outcome.lastError,
          next_attempt_at: outcome.nextAttemptAt,
          updated_at: outcome.at,
        })
        .where("id", "=", id)
        .execute();
    },

    provider(): Promise<MessagingProviderTable | undefined> {
      return db
        .selectFrom("messaging_provider")
        .selectAll()
        .where("id", "=", PROVIDER)
        .executeTakeFirst();
    },

    async saveProvider(row: Omit<MessagingProviderTable, "id">): Promise<void> {
      await db
        .insertInto("messaging_provider")
        .values({ id: PROVIDER, ...row })
        .onConflict((oc) => oc.column("id").doUpdateSet(row))
        .execute();
    },

    config(orgId: string): Promise<TicketMessagingConfigTable | undefined> {
      return db
        .selectFrom("ticket_messaging_config")
        .selectAll()
        .where("org_id", "=", orgId)
        .executeTakeFirst();
    },

    async saveConfig(row: TicketMessagingConfigTable): Promise<void> {
      const { org_id: _orgId, ...rest } = row;
      await db
        .insertInto("ticket_messaging_config")
        .values(row)
        .onConflict((oc) => oc.column("org_id").doUpdateSet(rest))
        .execute();
    },
  };
}
