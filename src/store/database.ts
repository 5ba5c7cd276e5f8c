// Opens the embedded SQLite store and brings its schema up to date.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SqliteDatabase from "better-sqlite3";
import {
  Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  SqliteDialect,
  type SqliteDatabase as SqliteDialectDatabase,
  sql,
} from "kysely";
import { migrations } from "./migrations/index.js";
import type { Database } from "./schema.js";

/** A database handle or a transaction: repositories accept either. */
export type Db = Kysely<Database>;

// Kysely's SQLite driver prepares every query anew; the API's queries are a few hundred distinct
// strings, so keeping their prepared statements saves the parse on every request.
const STATEMENT_CACHE_SIZE = 500;

function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectDatabase {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(query: string) {
      const cached = statements.get(query);
      // A statement still being iterated cannot run again; such a caller gets a fresh one.
      if (cached && !cached.busy) return cached;
      const statement = sqlite.prepare(query);
      if (!cached) {
        if (statements.size >= STATEMENT_CACHE_SIZE) {
          statements.delete(statements.keys().next().value as string);
        }
        statements.set(query, statement);
      }
      return statement;
    },
  };
}

const generations = new WeakMap<Db, () => string>();

/**
 * A value that changes whenever anything in the store changes: a commit by this process
 * (SQLite's total_changes()) or by any other connection, such as `pbxctl apply` beside a running
 * server (PRAGMA data_version). Null for handles not opened here (transactions), which must not
 * use cached reads.
 */
export function storeGeneration(db: Db): string | null {
  return generations.get(db)?.() ?? null;
}

/** A Kysely handle on the SQLite file `file` (created with its directory), WAL mode, FKs on. */
export function openSqlite(file: string): Db {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
  });
  const dataVersion = sqlite.prepare("PRAGMA data_version").pluck();
  const totalChanges = sqlite.prepare("SELECT total_changes()").pluck();
  generations.set(db, () => `${dataVersion.get()}:${totalChanges.get()}`);
  return db;
}

const provider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(migrations);
  },
};

/** Runs every pending migration; throws with the failing migration's name and cause. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error) {
    const cause = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? "?"} failed: ${cause}`);
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** Names of the migrations this build has that the store has not run (none on a migrated store). */
export async function migrationsPending(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  return (await migrator.getMigrations())
    .filter((m) => m.executedAt === undefined)
    .map((m) => m.name);
}

/** Opens `file` and migrates it: the one call the server and CLI need. */
export async function openStore(file: string): Promise<Db> {
  const db = openSqlite(file);
  await migrateToLatest(db);
  return db;
}

/** True when the store answers a trivial query (for /health). */
export async function storeIsHealthy(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
