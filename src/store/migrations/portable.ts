// The column types whose spelling differs between the SQLite and the PostgreSQL store, named once
// so every migration stays one file for both back ends. SQLite keeps exactly the types it was
// created with (its stores already exist); PostgreSQL gets native ones.
import { type ColumnDefinitionBuilder, type Kysely, type RawBuilder, sql } from "kysely";
import type { Db } from "../database.js";
import { storeDialect } from "../dialect.js";

// biome-ignore lint/suspicious/noExplicitAny: migrations take whatever handle Kysely gives them
type AnyDb = Kysely<any>;

function isPostgres(db: AnyDb | Kysely<unknown>): boolean {
  return storeDialect(db as unknown as Db) === "postgres";
}

/**
 * An instant: ISO 8601 UTC text on SQLite (it sorts as text), `timestamptz` on PostgreSQL (the
 * pool's type parser turns it back into the same ISO string, database-postgres.ts).
 */
export function timeType(db: AnyDb | Kysely<unknown>): "timestamptz" | "varchar(32)" {
  return isPostgres(db) ? "timestamptz" : "varchar(32)";
}

/** A generated integer key's type: SQLite's rowid alias, a 64-bit identity on PostgreSQL. */
export function serialType(db: AnyDb | Kysely<unknown>): "integer" | "bigint" {
  return isPostgres(db) ? "bigint" : "integer";
}

/** The primary key of a generated integer key (pair with `serialType`). */
export function serialKey(
  db: AnyDb | Kysely<unknown>,
): (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return isPostgres(db)
    ? (c) => c.primaryKey().generatedByDefaultAsIdentity()
    : (c) => c.primaryKey().autoIncrement();
}

/** Now, as a value for a `timeType` column. */
export function currentTime(db: AnyDb | Kysely<unknown>): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`now()` : sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
}
