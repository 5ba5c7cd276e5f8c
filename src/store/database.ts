// Opens the store (the embedded SQLite file, or PostgreSQL when PBX_DATABASE_URL says so) and
// brings its schema up to date.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SqliteDatabase from "better-sqlite3";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  SqliteDialect,
  type SqliteDatabase as SqliteDialectDatabase,
  sql,
} from "kysely";
import type { StoreLocation } from "../config.js";
import { openPostgres, storeChangeFeed } from "./database-postgres.js";
import { storeDialect } from "./dialect.js";
import { migrations } from "./migrations/index.js";
import type { Database } from "./schema.js";
import { setGenerationSource } from "./store-generation.js";

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

/**
 * SQLite with transactions that take the write lock when they begin (`BEGIN IMMEDIATE`). Kysely
 * begins deferred transactions, which read first and ask for the write lock at their first
 * write; when another process (another replica, `pbxctl apply` beside the server) committed in
 * between, SQLite refuses that upgrade at once with SQLITE_BUSY instead of waiting
 * (busy_timeout does not apply), and the request fails. Taken at BEGIN, the lock is waited for.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw("begin immediate"));
    };
    return driver;
  }
}

/**
 * A value that changes whenever anything in the store changes (see store-generation.ts). On
 * SQLite: a commit by this process (total_changes()) or by any other connection, such as
 * `pbxctl apply` beside a running server (PRAGMA data_version). On PostgreSQL: the change feed
 * of `followStoreChanges`, null until it follows. Null for transactions, which must not use
 * cached reads.
 */
export { storeGeneration } from "./store-generation.js";

/**
 * On PostgreSQL, opens the handle's change feed (one dedicated LISTEN connection) so that reads
 * can be cached and other replicas' changes still be seen within a second; resolves once it
 * follows or its first attempt failed (it retries by itself). Nothing on SQLite, whose reads are
 * cached from the start. The feed closes with the handle.
 */
export async function followStoreChanges(
  db: Db,
  onError?: (error: unknown) => void,
): Promise<void> {
  await storeChangeFeed(db)?.start(onError);
}

/**
 * Whether cached reads are in use on PostgreSQL (`following`: the change feed is connected and
 * proven) or every read asks the database (`behind`: down, reconnecting or its proof too old);
 * null on SQLite, which has no feed. For /health: a replica behind still answers correctly, only
 * slower, so this is said, not a reason to take the replica out.
 */
export function changeFeedState(db: Db): "following" | "behind" | null {
  const feed = storeChangeFeed(db);
  if (feed === null) return null;
  return feed.following ? "following" : "behind";
}

/** SQLite's page cache per connection, in KiB (the default is 2,000). */
const CACHE_KIB = 64 * 1024;
/** WAL pages that trigger an automatic checkpoint (the default is 1,000). */
const WAL_CHECKPOINT_PAGES = 10_000;

/** A Kysely handle on the SQLite file `file` (created with its directory), WAL mode, FKs on. */
export function openSqlite(file: string): Db {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  // Every commit synced before it returns, so what a request accepted survives a power loss too.
  // Said explicitly: better-sqlite3 is built with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1, so a file
  // already in WAL mode (every start but the first) opened at NORMAL, where the commits since
  // the last checkpoint can be lost.
  sqlite.pragma("synchronous = FULL");
  // Room for the hot index pages of a large store: the call ingest touches about six index
  // pages per record in orgs all over the key space, which the default 2 MB cache evicts between
  // batches, so each was read and written again (docs/performance.md, ingest). Memory is taken
  // only as pages are read.
  sqlite.pragma(`cache_size = -${CACHE_KIB}`);
  // Checkpoints every ~40 MB of WAL instead of ~4 MB: a page changed by several commits is
  // copied into the database once per checkpoint, not once per few batches. With synchronous
  // FULL a commit is on disk in the WAL before it returns, so this moves no commit's durability;
  // the cost is a larger WAL to replay after a crash.
  sqlite.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }),
  });
  const dataVersion = sqlite.prepare("PRAGMA data_version").pluck();
  const totalChanges = sqlite.prepare("SELECT total_changes()").pluck();
  setGenerationSource(db, () => `${dataVersion.get()}:${totalChanges.get()}`);
  return db;
}

const provider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(migrations);
  },
};

type MigrationStep = Awaited<ReturnType<Migrator["migrateUp"]>>;

function migrated(step: MigrationStep): string[] {
  const failed = step.results?.find((r) => r.status === "Error");
  if (step.error) {
    const cause = step.error instanceof Error ? step.error.message : String(step.error);
    throw new Error(`migration ${failed?.migrationName ?? "?"} failed: ${cause}`);
  }
  return (step.results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/**
 * Runs every pending migration; throws with the failing migration's name and cause. On
 * PostgreSQL each migration is its own transaction (Kysely would run all pending ones in one),
 * under Kysely's migration lock, so replicas starting together migrate once and a failure keeps
 * every migration before it.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  if (storeDialect(db) === "sqlite") return migrated(await migrator.migrateToLatest());
  const done: string[] = [];
  for (;;) {
    const step = migrated(await migrator.migrateUp());
    if (step.length === 0) return done;
    done.push(...step);
  }
}

/** A handle on the store at `location` (a SQLite file path, or where config says), unmigrated. */
export function openStoreHandle(location: StoreLocation | string): Db {
  if (typeof location === "string") {
    // A string is a SQLite file; a PostgreSQL URL here would become a file named after it.
    if (/^postgres(ql)?:/i.test(location)) {
      throw new Error("openStoreHandle: a PostgreSQL URL needs { kind: 'postgres', url }");
    }
    return openSqlite(location);
  }
  if (location.kind === "sqlite") return openSqlite(location.file);
  return openPostgres(location.url, location.poolSize, location.timeouts);
}

/**
 * A handle for migrating the store at `location`: on PostgreSQL with no statement timeout, since
 * a migration (an index built over a large table, the wait for another replica's migrations
 * under the lock) may legitimately run for minutes; the connect timeout stays.
 */
export function openMigrationHandle(location: StoreLocation | string): Db {
  if (typeof location === "string" || location.kind === "sqlite") {
    return openStoreHandle(location);
  }
  return openStoreHandle({
    ...location,
    timeouts: { ...location.timeouts, statementMs: 0 },
  });
}

/** Runs the pending migrations of the store at `location` on a handle of its own. */
export async function migrateStoreAt(location: StoreLocation | string): Promise<string[]> {
  const db = openMigrationHandle(location);
  try {
    return await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

/** Opens the store and migrates it: the one call the server and CLI need. */
export async function openStore(location: StoreLocation | string): Promise<Db> {
  // PostgreSQL migrates on a handle without the statement timeout, then the store is opened with
  // it; SQLite (one file, no such timeout) migrates on the handle it returns.
  if (typeof location !== "string" && location.kind === "postgres") {
    await migrateStoreAt(location);
    return openStoreHandle(location);
  }
  const db = openStoreHandle(location);
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return db;
}

/** The store's schema is older than this build's migrations. */
export class StoreBehindError extends Error {
  override readonly name = "StoreBehindError";
}

/** Opens the store without migrating it, and fails unless its schema is up to date. */
export async function openMigratedStore(location: StoreLocation | string): Promise<Db> {
  const db = openStoreHandle(location);
  try {
    const pending = await migrationsPending(db);
    if (pending.length > 0) {
      throw new StoreBehindError(
        `the store needs migrating (${pending.join(", ")} pending): run pbxctl db migrate, or serve without --no-migrate`,
      );
    }
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return db;
}

/** Names of the migrations this build has that the store has not run (none on a migrated store). */
export async function migrationsPending(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  return (await migrator.getMigrations())
    .filter((m) => m.executedAt === undefined)
    .map((m) => m.name);
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
