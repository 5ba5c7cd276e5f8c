// DIDs (the pool and the numbers assigned to orgs) and orgs' requests for pool numbers.
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("dids")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.references("organizations.id").onDelete("set null"),
    )
    .addColumn("number", "varchar(20)", (c) => c.notNull().unique())
    .addColumn("status", "varchar(20)", (c) => c.notNull())
    .addColumn("pool_status", "varchar(20)", (c) => c.notNull())
    .addColumn("is_default", "integer", (c) => c.notNull())
    .addColumn("routing_type", "varchar(20)")
    .addColumn("routing_destination", "varchar(64)")
    .addColumn("routing_environment", "varchar(10)", (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema.createIndex("dids_org").on("dids").column("org_id").execute();
  await db.schema.createIndex("dids_pool_status").on("dids").column("pool_status").execute();
  await db.schema
    .createTable("did_requests")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("did_id", "varchar(36)", (c) =>
      c.notNull().references("dids.id").onDelete("cascade"),
    )
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("status", "varchar(20)", (c) => c.notNull())
    .addColumn("requested_by", "varchar(320)")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .addColumn("decided_at", timeType(db))
    .execute();
  await db.schema.createIndex("did_requests_status").on("did_requests").column("status").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("did_requests").execute();
  await db.schema.dropTable("dids").execute();
}
