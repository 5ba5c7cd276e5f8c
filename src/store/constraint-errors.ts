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
