// Which database engine a store handle speaks. Everything that differs between the embedded
// SQLite store and PostgreSQL (row locks, triggers, generations, time and JSON columns) asks here,
// and only code in src/store may ask: the layers above see one store.
import { PostgresAdapter } from "kysely";
import type { Db } from "./database.js";

export type StoreDialect = "sqlite" | "postgres";

/** The engine behind `db` (a handle or a transaction on it). */
export function storeDialect(db: Db): StoreDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

/**
 * The operator that matches a LIKE pattern ignoring case on this engine: SQLite's `like` already
 * ignores ASCII case, PostgreSQL's does not (`ilike` does).
 */
export function caseInsensitiveLike(db: Db): "like" | "ilike" {
  return storeDialect(db) === "postgres" ? "ilike" : "like";
}
