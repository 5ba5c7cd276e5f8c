// Outbound routes (dial patterns sent through a trunk).
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("outbound_routes")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("trunk_id", "varchar(36)", (c) => c.notNull().references("trunks.id"))
    .addColumn("strip_digits", "integer", (c) => c.notNull())
    .addColumn("prepend_digits", "varchar(20)", (c) => c.notNull())
    .addColumn("caller_id_override", "varchar(20)")
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("outbound_routes_org")
    .on("outbound_routes")
    .column("org_id")
    .execute();
  await db.schema
    .createTable("outbound_route_patterns")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("route_id", "varchar(36)", (c) =>
      c.notNull().references("outbound_routes.id").onDelete("cascade"),
    )
    .addColumn("pattern", "varchar(41)", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("outbound_route_patterns_route")
    .on("outbound_route_patterns")
    .column("route_id")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("outbound_route_patterns").execute();
  await db.schema.dropTable("outbound_routes").execute();
}
