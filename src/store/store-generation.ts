// The store generation behind cached reads (src/store/read-cache.ts): per store handle, a value
// that changes whenever something a cached read read may have changed, or null when that cannot
// be known and nothing may be cached. Each back end registers how its handles compute it: SQLite
// from PRAGMA data_version (src/store/database.ts), PostgreSQL from its change feed
// (src/store/change-feed.ts). Transactions are not registered: they never use cached reads.
import type { Db } from "./database.js";

const sources = new WeakMap<Db, () => string | null>();

/** Registers how `db`'s generation is computed (when the handle is opened). */
export function setGenerationSource(db: Db, source: () => string | null): void {
  sources.set(db, source);
}

/** `db`'s generation now, or null: then reads must not be cached. */
export function storeGeneration(db: Db): string | null {
  return sources.get(db)?.() ?? null;
}
