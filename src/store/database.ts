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
  sql,
} from "kysely";
import { migrations } from "./migrations/index.js";
import type { Database } from "./schema.js";

/** A database handle or a transaction: repositories accept either. */
export type Db = Kysely<Database>;

/** A Kysely handle on the SQLite file `file` (created with its directory), WAL mode, FKs on. */
export function openSqlite(file: string): Db {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
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
