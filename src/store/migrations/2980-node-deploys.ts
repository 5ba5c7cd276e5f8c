// Per-node deploys (issue 25, docs/nodes.md): once engine nodes exist, each node has its own
// deployer, so what was deployed and what each engine runs is kept per node.
// - `deploy_records.node_id`: the node a deploy went to; '' for the one implicit engine of an
//   install with no node (every record written before this migration).
// - `node_applied_revisions`: what each node's engine runs, by unit (the implicit engine keeps
//   `applied_revisions`, untouched, so an install with no node behaves exactly as before).
// - `deploy_jobs.node_id`: the node whose deployer carries an on-request deploy out; null for the
//   implicit engine.
import { type Kysely, sql } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("deploy_records")
    .addColumn("node_id", "varchar(36)", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema
    .createIndex("deploy_records_node_unit_started")
    .on("deploy_records")
    .columns(["node_id", "unit", "started_at"])
    .execute();
  await db.schema
    .createTable("node_applied_revisions")
    // No foreign key: a removed node's rows are history, and a node that comes back under the
    // same id (never: ids are UUIDs) would compare against them. (Since migration 3023 the
    // node's removal deletes them: nothing read them, its deploy records are the history.)
    .addColumn("node_id", "varchar(36)", (c) => c.notNull())
    .addColumn("unit", "varchar(64)", (c) => c.notNull())
    .addColumn("revision", "varchar(64)", (c) => c.notNull())
    .addColumn("applied_at", timeType(db), (c) => c.notNull())
    .addColumn("deploy_id", "varchar(36)", (c) => c.notNull())
    .addColumn("files", "text", (c) => c.notNull())
    .addColumn("stats", "text")
    .addPrimaryKeyConstraint("node_applied_revisions_pk", ["node_id", "unit"])
    .execute();
  await db.schema.alterTable("deploy_jobs").addColumn("node_id", "varchar(36)").execute();
  await db.schema.dropIndex("deploy_jobs_unfinished").execute();
  await db.schema
    .createIndex("deploy_jobs_unfinished")
    .on("deploy_jobs")
    .columns(["node_id", "requested_at"])
    .where(sql.ref("finished_at"), "is", null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("deploy_jobs_unfinished").execute();
  await db.schema
    .createIndex("deploy_jobs_unfinished")
    .on("deploy_jobs")
    .column("requested_at")
    .where(sql.ref("finished_at"), "is", null)
    .execute();
  await db.schema.alterTable("deploy_jobs").dropColumn("node_id").execute();
  await db.schema.dropTable("node_applied_revisions").execute();
  await db.schema.dropIndex("deploy_records_node_unit_started").execute();
  await db.schema.alterTable("deploy_records").dropColumn("node_id").execute();
}
