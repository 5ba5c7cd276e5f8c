// `pbxctl db backup FILE`: a consistent copy of the store while the server runs. SQLite's online
// backup API does the copying (src/store/sqlite-backup.ts); a PostgreSQL store is PostgreSQL's to
// back up (pg_dump), so it is refused with that advice. The data directory's secret files are not
// in the store: they are created once and never change, so they are copied once, not per backup.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import {
  assertSqliteStore,
  backupSqliteFile,
  NotSqliteStoreError,
} from "../../store/sqlite-backup.js";
import type { DataStore } from "../config/gitops.js";

/** The files of the data directory a restore needs besides the store (generated once). */
export const DATA_DIR_SECRETS = ["jwt-secret", "server-key", "admin-password.hash"] as const;

/** A backup that cannot be made as asked (PostgreSQL store, file in the way, bad copy). */
export class StoreBackupError extends Error {
  override readonly name = "StoreBackupError";
}

export interface StoreBackupResult {
  file: string;
  bytes: number;
  pages: number;
  integrity: string;
  /** The data directory the copy came from, whose secret files a restore needs too. */
  dataDir: string;
}

/** Copies the store of `store` into `destination` (refused if it exists unless `overwrite`). */
export async function backupStore(
  store: DataStore,
  destination: string,
  options: { overwrite: boolean },
): Promise<StoreBackupResult> {
  try {
    assertSqliteStore(store.db);
  } catch (error) {
    if (error instanceof NotSqliteStoreError) {
      throw new StoreBackupError(
        "the store is PostgreSQL (PBX_DATABASE_URL): back it up with PostgreSQL's own tools, " +
          '`pg_dump --format=custom --file=FILE "$PBX_DATABASE_URL"` (docs/operating.md, ' +
          "docs/beyond-one-machine.md)",
      );
    }
    throw error;
  }
  const file = resolve(destination);
  if (file === resolve(store.dbFile)) {
    throw new StoreBackupError(`${file} is the store itself: back it up to another file`);
  }
  if (!options.overwrite && existsSync(file)) {
    throw new StoreBackupError(`${file} exists; pass --force to overwrite it`);
  }
  let copied: Awaited<ReturnType<typeof backupSqliteFile>>;
  try {
    copied = await backupSqliteFile(store.dbFile, file);
  } catch (error) {
    throw new StoreBackupError(`backup of ${store.dbFile} failed: ${(error as Error).message}`);
  }
  return {
    file,
    bytes: statSync(file).size,
    pages: copied.pages,
    integrity: copied.integrity,
    dataDir: store.dataDir,
  };
}
