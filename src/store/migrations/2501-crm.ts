// CRM (issue 16): leads and clients of an org in one table (a `kind` column; they share every
// field but a lead's status), and the org's custom field definitions. Each index starts with
// org_id, so one org's lookups (by phone for a call's contact, by status, owner or creation order)
// never walk another org's rows.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("crm_records")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("kind", "varchar(8)", (c) => c.notNull())
    .addColumn("name", "varchar(200)", (c) => c.notNull())
    .addColumn("phone", "varchar(16)")
    .addColumn("email", "varchar(254)")
    .addColumn("company", "varchar(200)")
    .addColumn("status", "varchar(16)")
    .addColumn("owner", "varchar(100)")
    // JSON array of strings / JSON object of custom values.
    .addColumn("tags", "text", (c) => c.notNull())
    .addColumn("notes", "text", (c) => c.notNull())
    .addColumn("custom", "text", (c) => c.notNull())
    // A lead's client after conversion; a client's lead it came from.
    .addColumn("linked_id", "varchar(36)")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("crm_records_org_kind_created")
    .on("crm_records")
    .columns(["org_id", "kind", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("crm_records_org_phone")
    .on("crm_records")
    .columns(["org_id", "phone"])
    .execute();
  await db.schema
    .createIndex("crm_records_org_kind_status")
    .on("crm_records")
    .columns(["org_id", "kind", "status"])
    .execute();
  await db.schema
    .createIndex("crm_records_org_kind_owner")
    .on("crm_records")
    .columns(["org_id", "kind", "owner"])
    .execute();

  await db.schema
    .createTable("crm_fields")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "varchar(40)", (c) => c.notNull())
    .addColumn("label", "varchar(100)", (c) => c.notNull())
    .addColumn("type", "varchar(8)", (c) => c.notNull())
    .addColumn("options", "text", (c) => c.notNull())
    .addColumn("required", "integer", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addUniqueConstraint("crm_fields_org_name", ["org_id", "name"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("crm_fields").execute();
  await db.schema.dropTable("crm_records").execute();
}
