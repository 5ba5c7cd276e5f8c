// On-request deploys through the deployer (issue 23): `POST /config/deploy`, `/config/reload`,
// `/organizations/{id}/regenerate` and `/admin/regenerate-gateway` received by a replica that is
// not the deployer are queued here; the holder of the deployer lease carries each out (its
// reloads stay one at a time) and writes the outcome, which the waiting replica answers with.
// A row lives for one request: the requester deletes it once answered.
import { type Kysely, sql } from "kysely";
import { timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("deploy_jobs")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    // `deploy-org`, `reload-org` or `regenerate-gateway`.
    .addColumn("kind", "varchar(32)", (c) => c.notNull())
    .addColumn("org_id", "varchar(36)")
    .addColumn("trigger", "varchar(64)")
    .addColumn("requested_by", "varchar(200)", (c) => c.notNull())
    .addColumn("requested_at", timeType(db), (c) => c.notNull())
    // The deployer carrying it out; a new deployer takes over what a lost one left unfinished.
    .addColumn("claimed_by", "varchar(200)")
    .addColumn("finished_at", timeType(db))
    // JSON: {"ok": <the outcome>} or {"error": {"name": ..., "message": ...}}.
    .addColumn("outcome", "text")
    .execute();
  await db.schema
    .createIndex("deploy_jobs_unfinished")
    .on("deploy_jobs")
    .column("requested_at")
    .where(sql.ref("finished_at"), "is", null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("deploy_jobs").execute();
}
