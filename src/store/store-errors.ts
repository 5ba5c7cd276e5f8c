// Tells a store that cannot be written now (an outage: retry later) from a statement the store
// rejects (bad input: retrying changes nothing). The call ingest holds its events through the
// first and drops only the second (src/api/call-tracking.ts). Decided by the drivers' codes, never
// by a guess at the message, except for node-postgres's own connection errors, which carry none:
// - better-sqlite3 throws a SqliteError whose `code` is SQLite's extended result code by name
//   (the driver turns extended codes on), so `SQLITE_BUSY_TIMEOUT` is a kind of `SQLITE_BUSY`:
//   locked beyond busy_timeout, an I/O error, a full disk, a file that cannot be opened or
//   written, out of memory. Constraint, type and syntax errors are rejections.
// - PostgreSQL sends a SQLSTATE (`code`): class 08 (connection), 53 (insufficient resources: disk
//   full, out of memory, too many connections), 57P01-57P03 (shut down by the administrator,
//   crashed, starting up), 58 (system I/O), 25006 (read-only: a standby after a failover), and
//   40001/40P01 (serialization failure, deadlock: the next try succeeds). Other classes (22 data,
//   23 integrity, 42 syntax, P0001 raised by a trigger) are rejections.
// - Node's socket errors (ECONNREFUSED, ECONNRESET, ...) reach us as they are, or as an
//   AggregateError of one per address tried; pg-pool wraps a connect timeout with its `cause`.

/** SQLite primary result codes that mean the store cannot take the write now. */
const SQLITE_UNAVAILABLE = [
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_IOERR",
  "SQLITE_FULL",
  "SQLITE_CANTOPEN",
  "SQLITE_NOMEM",
  "SQLITE_PROTOCOL",
  "SQLITE_READONLY",
];

/** PostgreSQL SQLSTATE classes (two characters) and codes that mean the same. */
const POSTGRES_UNAVAILABLE_CLASSES = new Set(["08", "53", "58"]);
const POSTGRES_UNAVAILABLE_CODES = new Set(["57P01", "57P02", "57P03", "25006", "40001", "40P01"]);

/** Socket errors of a connection to the database server (node:net, node:dns). */
const SOCKET_UNAVAILABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * node-postgres's errors of a lost or unopened connection, which have no code (pg/lib/client.js,
 * pg-pool/index.js).
 */
const PG_CONNECTION_MESSAGES = [
  "Connection terminated unexpectedly",
  "Connection terminated due to connection timeout",
  "timeout exceeded when trying to connect",
  "Client has encountered a connection error and is not queryable",
  "Query read timeout",
];

function codeUnavailable(code: string): boolean {
  if (SOCKET_UNAVAILABLE.has(code)) return true;
  if (code.startsWith("SQLITE_")) {
    return SQLITE_UNAVAILABLE.some((primary) => code === primary || code.startsWith(`${primary}_`));
  }
  if (/^[0-9A-Z]{5}$/.test(code)) {
    return (
      POSTGRES_UNAVAILABLE_CODES.has(code) || POSTGRES_UNAVAILABLE_CLASSES.has(code.slice(0, 2))
    );
  }
  return false;
}

/**
 * True when `error` says the store is unavailable (down, unreachable, restarting, locked, full)
 * rather than that it rejected what was asked: the same request may succeed later.
 */
export function isStoreUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== "object" || error === null || depth > 4) return false;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === "string" && codeUnavailable(code)) return true;
  if (typeof message === "string" && PG_CONNECTION_MESSAGES.includes(message)) return true;
  if (Array.isArray(errors) && errors.some((each) => isStoreUnavailable(each, depth + 1))) {
    return true;
  }
  return isStoreUnavailable(cause, depth + 1);
}
