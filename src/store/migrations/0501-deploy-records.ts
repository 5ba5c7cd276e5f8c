// What was deployed and what the engine runs, kept in the store so that the server, `pbxctl apply`
// and `/config/status` share one record (src/deploy/store-deploy-log.ts reads and writes these).
import type { Kysely } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("deploy_records")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("unit", "varchar(64)", (c) => c.notNull())
    .addColumn("revision", "varchar(64)", (c) => c.notNull())
    .addColumn("result", "varchar(16)", (c) => c.notNull())
    .addColumn("trigger", "varchar(32)", (c) => c.notNull())
    .addColumn("started_at", timeType(db), (c) => c.notNull())
    // The whole record as JSON: files, reloads with their output, health, error.
    .addColumn("record", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("deploy_records_unit_started")
    .on("deploy_records")
    .columns(["unit", "started_at"])
    .execute();
  await db.schema
    .createIndex("deploy_records_started")
    .on("deploy_records")
    .column("started_at")
    .execute();
  await db.schema
    .createTable("applied_revisions")
    .addColumn("unit", "varchar(64)", (c) => c.primaryKey())
    .addColumn("revision", "varchar(64)", (c) => c.notNull())
    .addColumn("applied_at", timeType(db), (c) => c.notNull())
    .addColumn("deploy_id", "varchar(36)", (c) => c.notNull())
    // JSON: content hash per file, and the size/mtime/inode stamps of each file.
    .addColumn("files", "text", (c) => c.notNull())
    .addColumn("stats", "text")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("applied_revisions").execute();
  await db.schema.dropTable("deploy_records").execute();
}
