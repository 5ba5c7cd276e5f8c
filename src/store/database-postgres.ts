// The PostgreSQL side of the store (PBX_DATABASE_URL): a pg pool behind Kysely's PostgresDialect,
// with type parsers that give repositories exactly the values the SQLite store gives them, so no
// code above src/store can tell the two apart:
// - timestamptz columns come back as ISO 8601 UTC strings with milliseconds
//   (`2026-01-01T00:00:00.000Z`), the form every repository writes and compares;
// - bigint (ids of serial columns, count(*), sum()) and numeric come back as numbers.
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import Cursor from "pg-cursor";
import type { Database } from "./schema.js";

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
    return pg.types.getTypeParser(oid, format as "text");
  },
} as unknown as pg.CustomTypesConfig;

/** Connection settings every pooled connection gets: UTC, so times print as `...+00`. */
function poolConfig(url: string, poolSize: number): pg.PoolConfig {
  return {
    connectionString: url,
    max: poolSize,
    types: storeTypes,
    options: "-c TimeZone=UTC",
    // A connection idle this long is closed; the next request opens a new one.
    idleTimeoutMillis: 30_000,
  };
}

/** A Kysely handle on the PostgreSQL database at `url`, at most `poolSize` connections. */
export function openPostgres(url: string, poolSize: number): Kysely<Database> {
  const pool = new pg.Pool(poolConfig(url, poolSize));
  // An idle connection the server dropped must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  // The cursor lets `stream()` read a large table (db copy's checks) without holding it in memory.
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool, cursor: Cursor }) });
}
