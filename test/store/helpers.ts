// A fresh, migrated store: a SQLite file in a temporary directory, or on `npm run test:pg` a
// fresh PostgreSQL database (test-database.ts). `sqliteOnly`: a test about the SQLite file
// itself (its pragmas, a second connection to it), which keeps running on SQLite.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Migrator, sql } from "kysely";
import { type Db, openStore } from "../../src/store/database.js";
import { storeDialect } from "../../src/store/dialect.js";
import { migrations } from "../../src/store/migrations/index.js";
import { freshStoreLocation } from "./test-database.js";

export async function freshStore(
  options: { sqliteOnly?: boolean } = {},
): Promise<{ db: Db; file: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "pbx-store-"));
  const file = join(dir, "pbx.db");
  const store = await freshStoreLocation(file, options);
  const db = await openStore(store.location);
  return {
    db,
    file,
    async close() {
      await db.destroy();
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What creating an engine node named `name` takes (its AMI login a placeholder). */
export function engineNodeInput(name: string, capacity = 10) {
  return {
    name,
    ami_username: "pbxctl",
    ami_secret: "secret",
    sip_address: `${name}.example`,
    capacity,
  };
}

/**
 * Migrates `db` back (or forward) to the migration named `name`: a migration's test sets up the
 * rows an earlier version left, then migrates to the latest.
 */
export async function migratedTo(db: Db, name: string): Promise<Migrator> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => Object.fromEntries(migrations) },
  });
  const { error } = await migrator.migrateTo(name);
  if (error) throw error;
  return migrator;
}

/** Inserts a bare active org row (credentials are placeholders: store tests do not log in). */
export async function insertOrg(
  db: Db,
  id: string,
  name = "Acme",
  contextPrefix = `org_${id}_`,
): Promise<void> {
  const now = "2026-01-01T00:00:00.000Z";
  await db
    .insertInto("organizations")
    .values({
      id,
      name,
      slug: null,
      type: "production",
      status: "active",
      context_prefix: contextPrefix,
      recording_enabled: 1,
      max_concurrent_calls: 0,
      api_key_digest: `digest-${id}`,
      api_key_encrypted: "sealed",
      api_secret_hash: "hash",
      request_status: null,
      requested_by_email: null,
      decided_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/**
 * Makes every audit-log insert fail (a trigger raising `audit log unavailable`, in the store's own
 * dialect) until the returned function is called.
 */
export async function breakAuditInserts(db: Db): Promise<() => Promise<void>> {
  if (storeDialect(db) === "postgres") {
    await sql`CREATE FUNCTION test_audit_down() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit log unavailable'; END $$`.execute(db);
    await sql`CREATE TRIGGER test_audit_down BEFORE INSERT ON audit_log
      FOR EACH ROW EXECUTE FUNCTION test_audit_down()`.execute(db);
    return async () => {
      await sql`DROP TRIGGER test_audit_down ON audit_log`.execute(db);
      await sql`DROP FUNCTION test_audit_down()`.execute(db);
    };
  }
  await sql`CREATE TRIGGER test_audit_down BEFORE INSERT ON audit_log
    BEGIN SELECT RAISE(ABORT, 'audit log unavailable'); END`.execute(db);
  return async () => {
    await sql`DROP TRIGGER test_audit_down`.execute(db);
  };
}
