// Recognises a unique-constraint violation whatever the dialect: SQLite (better-sqlite3) says
// SQLITE_CONSTRAINT_UNIQUE / SQLITE_CONSTRAINT_PRIMARYKEY, PostgreSQL says SQLSTATE 23505.

/** True when `error` is the database refusing a duplicate key. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return (
    code === "SQLITE_CONSTRAINT_UNIQUE" ||
    code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
    code === "23505"
  );
}

/**
 * True when `error` is a duplicate key on `table`'s `column` (a one-column unique constraint).
 * SQLite names it in the message (`UNIQUE constraint failed: table.column`), PostgreSQL in the
 * detail (`Key (column)=(value) already exists.`) of an error on that table.
 */
export function isUniqueViolationOf(error: unknown, table: string, column: string): boolean {
  if (!isUniqueViolation(error)) return false;
  const {
    message,
    table: pgTable,
    detail,
  } = error as {
    message?: unknown;
    table?: unknown;
    detail?: unknown;
  };
  if (String(message).includes(`${table}.${column}`)) return true;
  return pgTable === table && String(detail).startsWith(`Key (${column})=`);
}
