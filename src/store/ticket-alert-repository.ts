// Ticket alerts (who is told of which tickets, through which channel) and the WhatsApp message
// templates of the platform (migration 2401).
// The repositories answer and take the model's types: the JSON lists and 0/1 flags of the
// columns stay here.
import type { TicketAlertView, WhatsappTemplate } from "../model/tickets.js";
import type { Db } from "./database.js";
import type { TicketAlertRow } from "./ticket-tables.js";

/** What an update of an alert sets: everything but its ids and creation. */
export type TicketAlertChange = Omit<TicketAlertView, "id" | "org_id" | "created_at">;

function alertOf(row: TicketAlertRow): TicketAlertView {
  return {
    id: row.id,
    org_id: row.org_id,
    name: row.name,
    channel: row.channel as TicketAlertView["channel"],
    recipient: row.recipient,
    sources: JSON.parse(row.sources),
    priorities: JSON.parse(row.priorities),
    active: row.active === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function alertColumns(alert: TicketAlertChange) {
  return {
    name: alert.name,
    channel: alert.channel,
    recipient: alert.recipient,
    sources: JSON.stringify(alert.sources),
    priorities: JSON.stringify(alert.priorities),
    active: alert.active ? 1 : 0,
    updated_at: alert.updated_at,
  };
}

export function createTicketAlertRepository(db: Db) {
  return {
    async listOf(orgId: string): Promise<TicketAlertView[]> {
      const rows = await db
        .selectFrom("ticket_alerts")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
      return rows.map(alertOf);
    },
    async findById(id: string): Promise<TicketAlertView | undefined> {
      const row = await db
        .selectFrom("ticket_alerts")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return row && alertOf(row);
    },
    async insert(alert: TicketAlertView): Promise<void> {
      await db
        .insertInto("ticket_alerts")
        .values({
          id: alert.id,
          org_id: alert.org_id,
          ...alertColumns(alert),
          created_at: alert.created_at,
        })
        .execute();
    },
    async update(id: string, change: TicketAlertChange): Promise<void> {
      await db
        .updateTable("ticket_alerts")
        .set(alertColumns(change))
        .where("id", "=", id)
        .execute();
    },
    async delete(id: string): Promise<void> {
      await db.deleteFrom("ticket_alerts").where("id", "=", id).execute();
    },
  };
}

export function createWhatsappTemplateRepository(db: Db) {
  return {
    list(): Promise<WhatsappTemplate[]> {
      return db
        .selectFrom("whatsapp_templates")
        .selectAll()
        .orderBy("name")
        .orderBy("language")
        .execute();
    },
    findById(id: string): Promise<WhatsappTemplate | undefined> {
      return db
        .selectFrom("whatsapp_templates")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
    },
    findByName(name: string, language: string): Promise<WhatsappTemplate | undefined> {
      return db
        .selectFrom("whatsapp_templates")
        .selectAll()
        .where("name", "=", name)
        .where("language", "=", language)
        .executeTakeFirst();
    },
    async insert(row: WhatsappTemplate): Promise<void> {
      await db.insertInto("whatsapp_templates").values(row).execute();
    },
    async update(id: string, row: Partial<WhatsappTemplate>): Promise<void> {
      await db.updateTable("whatsapp_templates").set(row).where("id", "=", id).execute();
    },
    async delete(id: string): Promise<void> {
      await db.deleteFrom("whatsapp_templates").where("id", "=", id).execute();
    },
  };
}
