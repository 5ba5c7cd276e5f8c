// One unit of work over several use-case steps: everything `work` writes, in its own transactions
// or not, commits together or not at all. The audit hook runs an API mutation in one so its audit
// record commits with the change (issue 28 item 5). Code inside asks `db.transaction()` as it
// always does; inside a unit that is a savepoint, so a step that fails and is caught by its
// caller is undone alone, as its own transaction would have been.
import type { ControlledTransaction } from "kysely";
import type { Db } from "./database.js";
import type { Database } from "./schema.js";

type Unit = ControlledTransaction<Database>;

/** `trx` as a store handle whose `transaction()` nests as a savepoint. */
function nestingHandle(trx: Unit): Db {
  let savepoints = 0;
  const transaction = () => ({
    async execute<T>(step: (db: Db) => Promise<T>): Promise<T> {
      const name = `unit_step_${++savepoints}`;
      const inner = await trx.savepoint(name).execute();
      try {
        const result = await step(inner as unknown as Db);
        await inner.releaseSavepoint(name).execute();
        return result;
      } catch (error) {
        await inner.rollbackToSavepoint(name).execute();
        throw error;
      }
    },
  });
  // Kysely's classes keep private fields: their methods must run on the transaction itself.
  return new Proxy(trx, {
    get: (target, property) => {
      if (property === "transaction") return transaction;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as unknown as Db;
}

/**
 * Runs `work` on a handle whose every statement belongs to one transaction, committed when
 * `work` resolves and rolled back when it throws. The handle must not leave `work`; while it is
 * open, other users of `db` on SQLite wait for it (one connection), so `work` must not wait on
 * anything that reads or writes the store through another handle.
 */
export async function inUnitOfWork<T>(db: Db, work: (db: Db) => Promise<T>): Promise<T> {
  const trx = (await db.startTransaction().execute()) as Unit;
  let result: T;
  try {
    result = await work(nestingHandle(trx));
  } catch (error) {
    await trx.rollback().execute();
    throw error;
  }
  await trx.commit().execute();
  return result;
}
