// The store generation behind cached reads (src/store/read-cache.ts): per store handle, a value
// that changes whenever something a cached read read may have changed, or null when that cannot
// be known and nothing may be cached. Each back end registers how its handles compute it: SQLite
// from PRAGMA data_version (src/store/database.ts), PostgreSQL from its change feed
// (src/store/change-feed.ts). Transactions are not registered: they never use cached reads.
import type { Db } from "./database.js";

interface Source {
  read: () => string | null;
  /** The handle whose cached reads these are: itself, or the one a request's view is of. */
  owner: Db;
}

const sources = new WeakMap<Db, Source>();

/** Registers how `db`'s generation is computed (when the handle is opened). */
export function setGenerationSource(db: Db, read: () => string | null): void {
  sources.set(db, { read, owner: db });
}

/** `db`'s generation now, or null: then reads must not be cached. */
export function storeGeneration(db: Db): string | null {
  return sources.get(db)?.read() ?? null;
}

/** The handle whose cached reads `db` shares (itself, unless `db` is a request's view). */
export function cacheOwner(db: Db): Db {
  return sources.get(db)?.owner ?? db;
}

/**
 * `db` for one request: the same connections and the same cached reads, but the generation is
 * read once, by the request's first cached read (its authentication), and reused by the others.
 * On SQLite a reading is PRAGMA data_version, about 8 us under load, and `GET /users` by key
 * made two (docs/performance.md, API).
 *
 * Why that keeps every cached answer current: the reading is taken after the request arrived,
 * so any commit that finished before it was sent (a revoked key, a suspended org) has already
 * moved the generation, and the request does not see the old entry. A value the request loads
 * itself is stored under its reading; it is at least as new as that reading (loaded after it),
 * and any later commit moves the generation away from it. What a request does not see is a
 * commit that lands while it is being answered, as if it had been answered a moment earlier.
 * Transactions (audited writes) never use the view's generation: they are not registered.
 */
export function withGenerationPerRequest(db: Db): Db {
  const source = sources.get(db);
  if (!source) return db;
  const view = db.withTables<Record<never, never>>() as Db;
  let reading: string | null | undefined;
  sources.set(view, {
    read: () => {
      if (reading === undefined) reading = source.read();
      return reading;
    },
    owner: source.owner,
  });
  return view;
}
