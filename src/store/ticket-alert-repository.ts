// Ticket alerts (who is told of which tickets, through which channel) and the WhatsApp message
// templates of the platform (migration 2401).
import type { Db } from "./database.js";
import type { TicketAlertRow, WhatsappTemplateRow } from "./ticket-tables.js";

export function createTicketAlertRepository(db: Db) {
  return {
    listOf(orgId: string): Promise<TicketAlertRow[]> {
      return db
        .selectFrom("ticket_alerts")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
    },
    findById(id: string): Promise<TicketAlertRow | undefined> {
      return db.selectFrom("ticket_alerts").selectAll().where("id", "=", id).executeTakeFirst();
    },
    async insert(row: TicketAlertRow): Promise<void> {
      await db.insertInto("ticket_alerts").values(row).execute();
    },
    async update(id: string, row: Partial<TicketAlertRow>): Promise<void> {
      await db.updateTable("ticket_alerts").set(row).where("id", "=", id).execute();
    },
    async delete(id: string): Promise<void> {
      await db.deleteFrom("ticket_alerts").where("id", "=", id).execute();
    },
  };
}

export function createWhatsappTemplateRepository(db: Db) {
  return {
    list(): Promise<WhatsappTemplateRow[]> {
      return db
        .selectFrom("whatsapp_templates")
        .selectAll()
        .orderBy("name")
        .orderBy("language")
        .execute();
    },
    findById(id: string): Promise<WhatsappTemplateRow | undefined> {
      return db
        .selectFrom("whatsapp_templates")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
    },
    findByName(name: string, language: string): Promise<WhatsappTemplateRow | undefined> {
      return db
        .selectFrom("whatsapp_templates")
        .selectAll()
        .where("name", "=", name)
        .where("language", "=", language)
        .executeTakeFirst();
    },
    async insert(row: WhatsappTemplateRow): Promise<void> {
      await db.insertInto("whatsapp_templates").values(row).execute();
    },
    async update(id: string, row: Partial<WhatsappTemplateRow>): Promise<void> {
      await db.updateTable("whatsapp_templates").set(row).where("id", "=", id).execute();
    },
    async delete(id: string): Promise<void> {
      await db.deleteFrom("whatsapp_templates").where("id", "=", id).execute();
    },
  };
}
