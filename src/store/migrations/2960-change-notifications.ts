// Cached reads on PostgreSQL (issue 23): a replica reuses the reads of src/store/read-cache.ts
// while its store generation is unchanged, so every commit that changes a table those reads read
// must move the generation of every replica. A statement-level trigger on each such table
// notifies the channel `pbx_store_changes` with the table's name; PostgreSQL delivers a
// notification only when its transaction commits (never for a rolled-back one), to every
// listening session, and folds identical ones of one transaction into one.
//
// Only the tables cached reads read carry it: organizations, api_keys, users. The high-churn
// tables (leases renewed every second, the outboxes, call records) have none, and reads of them
// must simply not be cached. A table a new cached read reads gets its trigger in a new migration
// (test/store/change-feed.test.ts checks the list against CACHED_TABLES).
//
// Nothing on SQLite, whose generation is PRAGMA data_version (src/store/database.ts).
import { type Kysely, sql } from "kysely";
import type { Db } from "../database.js";
import { storeDialect } from "../dialect.js";

const TABLES = ["organizations", "api_keys", "users"] as const;

function isPostgres(db: Kysely<unknown>): boolean {
  return storeDialect(db as unknown as Db) === "postgres";
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`CREATE FUNCTION store_change_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('pbx_store_changes', TG_TABLE_NAME);
      RETURN NULL;
    END $$`.execute(db);
  for (const table of TABLES) {
    await sql`CREATE TRIGGER ${sql.id(`${table}_change_notify`)}
      AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION store_change_notify()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const table of TABLES) {
    await sql`DROP TRIGGER ${sql.id(`${table}_change_notify`)} ON ${sql.table(table)}`.execute(db);
  }
  await sql`DROP FUNCTION store_change_notify()`.execute(db);
}
