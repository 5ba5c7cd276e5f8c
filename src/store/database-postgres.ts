// The PostgreSQL side of the store (PBX_DATABASE_URL): a pg pool behind Kysely's PostgresDialect,
// with type parsers that give repositories exactly the values the SQLite store gives them, so no
// code above src/store can tell the two apart:
// - timestamptz columns come back as ISO 8601 UTC strings with milliseconds
//   (`2026-01-01T00:00:00.000Z`), the form every repository writes and compares;
// - bigint (ids of serial columns, count(*), sum()) and numeric come back as numbers.
// Each handle also has a change feed (change-feed.ts), opened by `followStoreChanges`, which its
// cached reads are keyed on; the driver tells it about this process's own commits.
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
} from "kysely";
import type pg from "pg";
import type Cursor from "pg-cursor";
import { type DatabaseTimeouts, DEFAULT_DATABASE_TIMEOUTS } from "../config.js";
import { packageOnFirstUse } from "../lazy-package.js";
import { changesCachedTable, StoreChangeFeed } from "./change-feed.js";
import type { Database } from "./schema.js";
import { setGenerationSource } from "./store-generation.js";

// Loaded when a PostgreSQL store is first opened: a SQLite store never needs them.
const pgDriver = packageOnFirstUse<typeof pg>("pg");
const pgCursor = packageOnFirstUse<typeof Cursor>("pg-cursor");

const OID = { int8: 20, numeric: 1700, timestamptz: 1184 } as const;

/**
 * PostgreSQL's text form of a timestamptz in a UTC session (`2026-01-01 00:00:00.123456+00`) as
 * the store's ISO string. Microseconds are cut to milliseconds: the store writes milliseconds.
 */
export function isoFromTimestamptz(text: string): string {
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d+))?\+00$/.exec(text);
  if (!match) return new Date(text).toISOString();
  const millis = (match[3] ?? "").padEnd(3, "0").slice(0, 3);
  return `${match[1]}T${match[2]}.${millis}Z`;
}

const parsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: Number,
  [OID.numeric]: Number,
  [OID.timestamptz]: isoFromTimestamptz,
};

const storeTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    const parser = parsers[oid];
    if (parser && format !== "binary") return parser;
    return pgDriver().types.getTypeParser(oid, format as "text");
  },
} as unknown as pg.CustomTypesConfig;

/** How much longer than the server's statement timeout the client waits for an answer. */
const CLIENT_GRACE_MS = 5_000;
/** The first TCP keepalive probe after this long without traffic (then Node's own interval). */
const KEEPALIVE_AFTER_MS = 10_000;

/**
 * Connection settings every pooled connection gets: UTC, so times print as `...+00`; and bounds
 * on the waits, so a database host that silently drops packets fails requests with errors the
 * store recognises as an outage (src/store/store-errors.ts) instead of hanging them, and a
 * shutdown, for the minutes TCP takes to give up:
 * - `connectionTimeoutMillis`: opening a connection (pg) and waiting for a free one (pg-pool);
 * - `statement_timeout`: PostgreSQL cancels a statement running longer (SQLSTATE 57014, a clear
 *   "canceling statement due to statement timeout"); `idle_in_transaction_session_timeout`: it
 *   ends a session whose transaction was left idle as long, so its locks go;
 * - `query_timeout`: the client stops waiting a little later ("Query read timeout"): only a
 *   server that never answers gets there;
 * - TCP keepalive: a connection whose host vanished while idle is noticed and replaced.
 * A statement timeout of 0 leaves the three statement bounds off (migrations, `db copy`).
 */
export function poolConfig(
  url: string,
  poolSize: number,
  timeouts: Partial<DatabaseTimeouts> = {},
): pg.PoolConfig {
  const { connectMs, statementMs } = { ...DEFAULT_DATABASE_TIMEOUTS, ...timeouts };
  return {
    connectionString: url,
    max: poolSize,
    types: storeTypes,
    options: "-c TimeZone=UTC",
    // A connection idle this long is closed; the next request opens a new one.
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: connectMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
    ...(statementMs > 0
      ? {
          statement_timeout: statementMs,
          idle_in_transaction_session_timeout: statementMs,
          query_timeout: statementMs + CLIENT_GRACE_MS,
        }
      : {}),
  };
}

/**
 * A driver that tells `feed` when this process commits a change to a table cached reads read:
 * at once for a statement outside a transaction, at the commit for one inside (never for a
 * rolled-back one). The feed also closes with the driver.
 */
function reportingOwnChanges(driver: Driver, feed: StoreChangeFeed): Driver {
  const patched = new WeakSet<DatabaseConnection>();
  // Connections inside a transaction, and whether it changed a cached table so far.
  const open = new WeakMap<DatabaseConnection, { changed: boolean }>();
  const acquire = driver.acquireConnection.bind(driver);
  const begin = driver.beginTransaction.bind(driver);
  const commit = driver.commitTransaction.bind(driver);
  const rollback = driver.rollbackTransaction.bind(driver);
  const destroy = driver.destroy.bind(driver);
  driver.acquireConnection = async () => {
    const connection = await acquire();
    // The driver keeps one connection object per pooled client: patch each once.
    if (!patched.has(connection)) {
      patched.add(connection);
      const execute = connection.executeQuery.bind(connection);
      connection.executeQuery = async <R>(query: CompiledQuery) => {
        const result = await execute<R>(query);
        if (changesCachedTable(query.query, query.sql)) {
          const transaction = open.get(connection);
          if (transaction) transaction.changed = true;
          else feed.noteOwnChange();
        }
        return result;
      };
    }
    return connection;
  };
  driver.beginTransaction = async (connection, settings) => {
    await begin(connection, settings);
    open.set(connection, { changed: false });
  };
  driver.commitTransaction = async (connection) => {
    const transaction = open.get(connection);
    open.delete(connection);
    await commit(connection);
    if (transaction?.changed) feed.noteOwnChange();
  };
  driver.rollbackTransaction = async (connection) => {
    open.delete(connection);
    await rollback(connection);
  };
  driver.destroy = async () => {
    await feed.stop();
    await destroy();
  };
  return driver;
}

class ReportingPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly feed: StoreChangeFeed,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return reportingOwnChanges(super.createDriver(), this.feed);
  }
}

const feeds = new WeakMap<Kysely<Database>, StoreChangeFeed>();

/** The change feed of a handle `openPostgres` opened; null for any other handle. */
export function storeChangeFeed(db: Kysely<Database>): StoreChangeFeed | null {
  return feeds.get(db) ?? null;
}

/** A Kysely handle on the PostgreSQL database at `url`, at most `poolSize` connections. */
export function openPostgres(
  url: string,
  poolSize: number,
  timeouts: Partial<DatabaseTimeouts> = {},
): Kysely<Database> {
  const config = poolConfig(url, poolSize, timeouts);
  const pool = new (pgDriver().Pool)(config);
  // An idle connection the server dropped must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  // Nor must one checked out: pg-pool listens for a client's errors only while it is idle, and a
  // server that shuts down (57P01) between two statements of a transaction makes the client emit
  // one with no query to take it, which would crash the process. The error is not lost: the
  // client's next query fails with it ("not queryable", src/store/store-errors.ts) and the pool
  // drops the client when it is released.
  pool.on("connect", (client) => client.on("error", () => {}));
  const feed = new StoreChangeFeed({
    // Its own LISTEN connection: the same connect bound and keepalive, no statement bound.
    connection: {
      connectionString: config.connectionString,
      options: config.options,
      connectionTimeoutMillis: config.connectionTimeoutMillis,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
    },
  });
  // The cursor lets `stream()` read a large table (db copy's checks) without holding it in memory.
  const db = new Kysely<Database>({
    dialect: new ReportingPostgresDialect({ pool, cursor: pgCursor() }, feed),
  });
  feeds.set(db, feed);
  setGenerationSource(db, () => feed.generation());
  return db;
}
