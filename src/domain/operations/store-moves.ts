// Operator work on the store itself (issue 23): migrating it explicitly for a rolling upgrade, and
// moving an install from its SQLite file to PostgreSQL.
import { existsSync } from "node:fs";
import type { StoreLocation } from "../../config.js";
import { migrateStoreAt, openStore } from "../../store/database.js";
import { copyStore, StoreCopyError, type TableCopy } from "../../store/store-copy.js";

export { copyIsExact, StoreCopyError, type TableCopy } from "../../store/store-copy.js";

/** Runs the store's pending migrations; answers their names (empty: it was up to date). */
export async function migrateStore(location: StoreLocation): Promise<string[]> {
  return migrateStoreAt(location);
}

/**
 * Copies the SQLite store `fromFile` into the PostgreSQL database `toUrl` (both migrated first;
 * the target must hold no row) and answers each table's count and checksum on both sides.
 */
export async function copySqliteToPostgres(fromFile: string, toUrl: string): Promise<TableCopy[]> {
  if (!existsSync(fromFile)) throw new StoreCopyError(`no SQLite store at ${fromFile}`);
  if (!/^postgres(ql)?:\/\//i.test(toUrl)) {
    throw new StoreCopyError("--to must be a postgres:// or postgresql:// URL");
  }
  const source = await openStore({ kind: "sqlite", file: fromFile });
  try {
    // A copy's bulk statements may legitimately run for minutes: no statement timeout.
    const target = await openStore({
      kind: "postgres",
      url: toUrl,
      poolSize: 2,
      timeouts: { statementMs: 0 },
    });
    try {
      return await copyStore(source, target);
    } finally {
      await target.destroy();
    }
  } finally {
    await source.destroy();
  }
}
