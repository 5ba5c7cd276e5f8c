// A store that fails as an unavailable one does, for the tests of what is held through an outage
// (test/calls/ingest-batching.test.ts, registration-outage.test.ts), and a logger that keeps
// what was said.
import SqliteDatabase from "better-sqlite3";
import type { KyselyPlugin } from "kysely";
import type { Logger } from "pino";
import * as assert from "uvu/assert";
import type { Db } from "../../src/store/database.js";

/**
 * The test's store as the ingest sees it, which fails every statement as SQLite does when another
 * process holds the lock past busy_timeout (SQLITE_BUSY) while `down`, and never answers while
 * `hang` (until `release`). The test's own reads go to the store itself.
 */
export function outageOf(db: Db) {
  let release = () => {};
  const hanging = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { down: false, hang: false, failures: 0, release };
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (state.down) {
        state.failures++;
        throw new SqliteDatabase.SqliteError("database is locked", "SQLITE_BUSY");
      }
      return args.node;
    },
    async transformResult(args) {
      if (state.hang) await hanging;
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin), state };
}

/**
 * Resolves once the store has failed `failures` tries in all and the last one's events are back
 * in the queue (its retry timer armed: nothing else arms a timer while a batch is being stored).
 * On PostgreSQL a try's BEGIN and ROLLBACK are round trips, so this waits for them, not a guess.
 */
export async function refusedTries(
  outage: ReturnType<typeof outageOf>,
  timers: { pendingTimers: number },
  failures: number,
): Promise<void> {
  for (let turn = 0; turn < 10_000; turn++) {
    if (outage.state.failures >= failures && timers.pendingTimers > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.unreachable(`the store was not tried ${failures} times`);
}

/** A logger that keeps what was said, by level. */
export function keptLog() {
  const said: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void => {
      said.push({ level, message, fields });
    };
  const logger = { error: at("error"), warn: at("warn"), info: at("info") } as unknown as Logger;
  return { logger, said };
}
