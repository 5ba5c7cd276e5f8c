// Pairing what a file states with what the store holds, for apply: by id, else by a natural key
// (extension, name, url, email), so a hand-written file without ids updates rows rather than
// replacing them.
import { randomUUID } from "node:crypto";

export interface Matched<T> {
  creates: T[];
  updates: T[];
  unchanged: T[];
  /** In the store, not in the file. */
  extra: T[];
  /** Every file item in file order, with its stored id when it has one. */
  inFileOrder: T[];
}

/** Stable JSON: keys sorted, undefined dropped, so equal content compares equal. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}

/**
 * Pairs desired items with stored ones: by id first, then by natural key. A paired item takes
 * the stored id, so a file that leaves ids out updates rows instead of replacing them.
 */
export function match<T extends { id?: string }>(
  stored: readonly T[],
  desired: readonly T[],
  key: (item: T) => string,
  comparable: (item: T) => unknown = (item) => item,
): Matched<T> {
  const byId = new Map(stored.map((item) => [item.id, item]));
  const taken = new Set<T>();
  const pairs: [T, T | undefined][] = desired.map((item) => {
    const found = item.id !== undefined ? byId.get(item.id) : undefined;
    if (found) taken.add(found);
    return [item, found];
  });
  const byKey = new Map<string, T>();
  for (const item of stored) if (!taken.has(item)) byKey.set(key(item), item);
  const result: Matched<T> = {
    creates: [],
    updates: [],
    unchanged: [],
    extra: [],
    inFileOrder: [],
  };
  for (const pair of pairs) {
    if (pair[1]) continue;
    const found = byKey.get(key(pair[0]));
    if (found) {
      taken.add(found);
      byKey.delete(key(pair[0]));
      pair[1] = found;
    }
  }
  for (const [want, have] of pairs) {
    if (!have) {
      const created = { ...want, id: want.id ?? randomUUID() };
      result.creates.push(created);
      result.inFileOrder.push(created);
      continue;
    }
    const next = { ...want, id: have.id };
    result.inFileOrder.push(next);
    if (canonical(comparable(next)) === canonical(comparable(have))) result.unchanged.push(next);
    else result.updates.push(next);
  }
  result.extra = stored.filter((item) => !taken.has(item));
  return result;
}
