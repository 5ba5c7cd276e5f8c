// Compliance (issue 16): the append-only audit log, retention policies per org and kind, and
// recording consent per phone number. The audit log rejects UPDATE always and DELETE unless the
// retention purge has opened the gate for that org inside its own transaction (a row in
// audit_purge_gate): no route, repository or stray SQL can rewrite history, while the purge that
// a retention policy asks for still can drop an org's expired rows. Every index starts with
// org_id, so no query of one org walks another org's rows.
import { type Kysely, sql } from "kysely";
import type { Db } from "../database.js";
import { storeDialect } from "../dialect.js";
import { serialKey, serialType, timeType } from "./portable.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("audit_log")
    .addColumn("id", serialType(db), serialKey(db))
    // Null for actions of no single org (an admin managing the DID pool): kept, not listed per org.
    .addColumn("org_id", "varchar(36)")
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    // user | org_key | org_jwt | api_key | admin | internal | cli
    .addColumn("actor_kind", "varchar(16)", (c) => c.notNull())
    // Platform user id, `ak_` key id, admin user name, or null (org key, internal key, cli).
    .addColumn("actor_id", "varchar(100)")
    .addColumn("request_id", "varchar(64)", (c) => c.notNull())
    .addColumn("resource_type", "varchar(64)", (c) => c.notNull())
    .addColumn("resource_id", "varchar(150)")
    .addColumn("action", "varchar(64)", (c) => c.notNull())
    // `POST /users`, `pbxctl apply`: what was asked, for the reader.
    .addColumn("operation", "varchar(200)", (c) => c.notNull())
    // JSON, secrets redacted; null when there was nothing before (create) or after (delete).
    .addColumn("before", "text")
    .addColumn("after", "text")
    .addColumn("diff", "text", (c) => c.notNull())
    // Whether the change scheduled a deploy of the org (its revision is found at read time).
    .addColumn("schedules_deploy", "integer", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("audit_log_org_created")
    .on("audit_log")
    .columns(["org_id", "created_at", "id"])
    .execute();

  await db.schema
    .createTable("audit_purge_gate")
    .addColumn("org_id", "varchar(36)", (c) => c.primaryKey())
    .execute();
  if (storeDialect(db as unknown as Db) === "postgres") await appendOnlyPostgres(db);
  else await appendOnlySqlite(db);

  await db.schema
    .createTable("retention_policies")
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("kind", "varchar(32)", (c) => c.notNull())
    // Null: keep forever.
    .addColumn("days", "integer")
    .addColumn("updated_at", timeType(db), (c) => c.notNull())
    .addPrimaryKeyConstraint("retention_policies_pk", ["org_id", "kind"])
    .execute();

  await db.schema
    .createTable("consent_records")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(36)", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("phone", "varchar(16)", (c) => c.notNull())
    .addColumn("recording_consent", "varchar(8)", (c) => c.notNull())
    .addColumn("source", "varchar(100)", (c) => c.notNull())
    .addColumn("recorded_at", timeType(db), (c) => c.notNull())
    .addColumn("created_at", timeType(db), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("consent_records_org_phone")
    .on("consent_records")
    .columns(["org_id", "phone"])
    .unique()
    .execute();
}

async function appendOnlySqlite(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END`.execute(db);
  await sql`CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
    WHEN NOT EXISTS (SELECT 1 FROM audit_purge_gate WHERE org_id = OLD.org_id)
    BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END`.execute(db);
}

/** The same rule in PL/pgSQL, and TRUNCATE (which fires no row trigger) refused outright. */
async function appendOnlyPostgres(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND EXISTS (SELECT 1 FROM audit_purge_gate WHERE org_id = OLD.org_id) THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'audit_log is append-only';
    END $$`.execute(db);
  for (const [name, event] of [
    ["audit_log_no_update", "UPDATE"],
    ["audit_log_no_delete", "DELETE"],
  ] as const) {
    await sql`CREATE TRIGGER ${sql.id(name)} BEFORE ${sql.raw(event)} ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`.execute(db);
  }
  await sql`CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("consent_records").execute();
  await db.schema.dropTable("retention_policies").execute();
  // Dropping the table drops its triggers on both back ends.
  await db.schema.dropTable("audit_purge_gate").execute();
  await db.schema.dropTable("audit_log").execute();
  if (storeDialect(db as unknown as Db) === "postgres") {
    await sql`DROP FUNCTION audit_log_append_only()`.execute(db);
  }
}
