// Which store errors mean "unavailable, try later" (src/store/store-errors.ts): the drivers' own
// errors where they can be made here (a SQLite file locked by another connection, a connection
// refused, a constraint), PostgreSQL's SQLSTATEs as node-postgres reports them.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import pg from "pg";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { isStoreUnavailable } from "../../src/store/store-errors.js";

const test = suite("store errors");

/** What `run` threw. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("nothing thrown");
}

test("SQLite locked by another connection beyond busy_timeout is unavailable; a constraint is not", async () => {
  const dir = await mkdtemp(join(tmpdir(), "store-errors-"));
  const file = join(dir, "store.sqlite");
  const holder = new SqliteDatabase(file);
  const other = new SqliteDatabase(file);
  try {
    holder.pragma("journal_mode = WAL");
    holder.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    holder.exec("INSERT INTO t VALUES (1)");
    other.pragma("busy_timeout = 0");
    holder.exec("BEGIN IMMEDIATE");
    const busy = thrown(() => other.exec("BEGIN IMMEDIATE"));
    assert.match(String((busy as { code?: string }).code), /^SQLITE_BUSY/);
    assert.ok(isStoreUnavailable(busy));
    holder.exec("ROLLBACK");
    const duplicate = thrown(() => other.exec("INSERT INTO t VALUES (1)"));
    assert.is((duplicate as { code?: string }).code, "SQLITE_CONSTRAINT_PRIMARYKEY");
    assert.not.ok(isStoreUnavailable(duplicate));
    assert.not.ok(isStoreUnavailable(thrown(() => other.exec("SELECT * FROM missing"))));
  } finally {
    holder.close();
    other.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("a PostgreSQL server that refuses the connection is unavailable", async () => {
  // Port 1 on loopback: nothing listens, so the connect is refused at once.
  const client = new pg.Client({ connectionString: "postgres://nobody@127.0.0.1:1/none" });
  client.on("error", () => {});
  const error = await client.connect().then(
    () => null,
    (failure: unknown) => failure,
  );
  assert.is((error as { code?: string }).code, "ECONNREFUSED");
  assert.ok(isStoreUnavailable(error));
});

test("PostgreSQL's SQLSTATEs: shutdown, crash, start-up, connection, resources, failover are unavailable", () => {
  const pgError = (code: string) => Object.assign(new Error("from the server"), { code });
  for (const code of ["57P01", "57P02", "57P03", "08006", "08001", "53100", "53300", "58030"]) {
    assert.ok(isStoreUnavailable(pgError(code)), code);
  }
  for (const code of ["25006", "40001", "40P01"])
    assert.ok(isStoreUnavailable(pgError(code)), code);
  for (const code of ["23505", "23502", "22001", "42P01", "P0001", "57014"]) {
    assert.not.ok(isStoreUnavailable(pgError(code)), `${code} is a rejection`);
  }
});

test("node-postgres's codeless connection errors, wrapped causes and one error per address", () => {
  assert.ok(isStoreUnavailable(new Error("Connection terminated unexpectedly")));
  assert.ok(isStoreUnavailable(new Error("timeout exceeded when trying to connect")));
  const wrapped = new Error("Connection terminated due to connection timeout", {
    cause: new Error("Connection terminated unexpectedly"),
  });
  assert.ok(isStoreUnavailable(wrapped));
  const perAddress = new AggregateError([
    Object.assign(new Error("connect ECONNREFUSED ::1:5432"), { code: "ECONNREFUSED" }),
  ]);
  assert.ok(isStoreUnavailable(perAddress));
  assert.not.ok(isStoreUnavailable(new Error("record refused")));
  assert.not.ok(isStoreUnavailable(new TypeError("Cannot read properties of undefined")));
  assert.not.ok(isStoreUnavailable(null));
});

test.run();
