// A consistent copy of a running SQLite store: SQLite's online backup API (through
// better-sqlite3's `.backup()`) copies the pages while the server keeps reading and writing, and
// restarts itself when a write lands mid-copy, so the copy is one committed state. A plain `cp`
// of a WAL database can miss the commits still in `pbx.db-wal` or tear a page.
import { rename, rm } from "node:fs/promises";
import SqliteDatabase from "better-sqlite3";
import type { Db } from "./database.js";
import { storeDialect } from "./dialect.js";

/** The store is not SQLite (PostgreSQL has its own tools: pg_dump). */
export class NotSqliteStoreError extends Error {
  override readonly name = "NotSqliteStoreError";
}

/** Throws NotSqliteStoreError unless `db` is a SQLite store. */
export function assertSqliteStore(db: Db): void {
  if (storeDialect(db) !== "sqlite") {
    throw new NotSqliteStoreError("the store is PostgreSQL, not a SQLite file");
  }
}

export interface SqliteBackupResult {
  /** Pages copied (page size × pages = bytes). */
  pages: number;
  /** `PRAGMA integrity_check` of the copy: "ok" or the problems SQLite found. */
  integrity: string;
}

/**
 * Copies the SQLite database `source` into `destination` (written beside it as
 * `<destination>.partial`, checked, then renamed, so `destination` is complete or absent), then
 * checks the copy. Throws when the copy fails its integrity check (the partial file is removed).
 */
export async function backupSqliteFile(
  source: string,
  destination: string,
): Promise<SqliteBackupResult> {
  const partial = `${destination}.partial`;
  const sqlite = new SqliteDatabase(source, { fileMustExist: true });
  let pages: number;
  try {
    sqlite.pragma("busy_timeout = 5000");
    pages = (await sqlite.backup(partial)).totalPages;
  } finally {
    sqlite.close();
  }
  const copy = new SqliteDatabase(partial, { fileMustExist: true });
  let integrity: string;
  try {
    // The copy keeps the source's WAL mode; one file is what a backup should be.
    copy.pragma("journal_mode = DELETE");
    integrity = (copy.pragma("integrity_check", { simple: false }) as { integrity_check: string }[])
      .map((row) => row.integrity_check)
      .join("; ");
  } finally {
    copy.close();
  }
  if (integrity !== "ok") {
    await rm(partial, { force: true });
    throw new Error(`the copy failed PRAGMA integrity_check: ${integrity}`);
  }
  await rename(partial, destination);
  return { pages, integrity };
}
