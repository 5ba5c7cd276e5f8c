// Reads that are asked far more often than the data changes (`GET /users` polled by tenant
// dashboards) are kept per store handle and reused while the store's generation is unchanged.
// Any commit, by this process or another one, changes the generation, so a cached read is never
// older than the last write; the cost is one generation check per request (the API reads it once
// per request: withGenerationPerRequest).
import type { Db } from "./database.js";
import { cacheOwner, storeGeneration } from "./store-generation.js";

const MAX_ENTRIES = 1000;

interface Entry {
  generation: string;
  value: unknown;
}

const caches = new WeakMap<Db, Map<string, Entry>>();

/**
 * `load()`'s answer for `key`, reused while nothing in the store has changed. The value is
 * shared between callers: treat it as read-only. Transactions (no generation) always load.
 * `undefined` (nothing found) is not kept, so guessing keys cannot push real entries out.
 */
export async function cachedRead<T>(db: Db, key: string, load: () => Promise<T>): Promise<T> {
  const generation = storeGeneration(db);
  if (generation === null) return load();
  const owner = cacheOwner(db);
  let cache = caches.get(owner);
  if (!cache) {
    cache = new Map();
    caches.set(owner, cache);
  }
  const hit = cache.get(key);
  if (hit && hit.generation === generation) return hit.value as T;
  const value = await load();
  // A write that committed while loading makes this value's generation unknown: keep it only
  // when the generation did not move.
  if (value !== undefined && storeGeneration(db) === generation) {
    cache.delete(key);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, { generation, value });
  }
  return value;
}
