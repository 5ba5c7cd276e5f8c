// Failed-login counts per throttled key (migration 2802); the rule lives in
// src/domain/access/login-throttle.ts.
import type { Db } from "./database.js";

export interface LoginThrottleTable {
  key: string;
  failures: number;
  last_failure_at: string;
  locked_until: string | null;
}

export interface LoginThrottleRow {
  key: string;
  failures: number;
  last_failure_at: string;
  locked_until: string | null;
}

export function createLoginThrottleRepository(db: Db) {
  return {
    /** The rows of `keys` that exist. */
    async find(keys: readonly string[]): Promise<LoginThrottleRow[]> {
      if (keys.length === 0) return [];
      return db.selectFrom("login_throttle").selectAll().where("key", "in", keys).execute();
    },

    /** Writes `row` over any row of its key. */
    async save(row: LoginThrottleRow): Promise<void> {
      await db
        .insertInto("login_throttle")
        .values(row)
        .onConflict((oc) =>
          oc.column("key").doUpdateSet({
            failures: row.failures,
            last_failure_at: row.last_failure_at,
            locked_until: row.locked_until,
          }),
        )
        .execute();
    },

    async clear(key: string): Promise<void> {
      await db.deleteFrom("login_throttle").where("key", "=", key).execute();
    },

    /** Forgets keys whose last failure is before `before` (their count has lapsed). */
    async sweep(before: string): Promise<void> {
      await db.deleteFrom("login_throttle").where("last_failure_at", "<", before).execute();
    },
  };
}
