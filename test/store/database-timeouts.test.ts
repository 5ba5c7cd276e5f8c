// The PostgreSQL store's timeouts (issue 33 part 2): PBX_DATABASE_CONNECT_TIMEOUT_MS and
// PBX_DATABASE_STATEMENT_TIMEOUT_MS read and checked in src/config.ts, and what the pool does with
// them (src/store/database-postgres.ts): a connect to a server that accepts and never speaks fails
// at the connect timeout, as an outage, instead of hanging; on a `--pg` run, a statement running
// past the statement timeout fails with PostgreSQL's own error, migrations run with none, and a
// server gone silent mid-connection (a proxy that stops passing packets) fails the query at the
// client's read timeout and lets the handle close.
import { connect, createServer, type Server, type Socket } from "node:net";
import { sql } from "kysely";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  DEFAULT_DATABASE_TIMEOUTS,
  databaseTimeoutsFrom,
  storeLocationFrom,
} from "../../src/config.js";
import { openMigrationHandle, openStoreHandle } from "../../src/store/database.js";
import { openPostgres, poolConfig } from "../../src/store/database-postgres.js";
import { isStoreUnavailable } from "../../src/store/store-errors.js";
import { freshStoreLocation, testBackend } from "./test-database.js";

const test = suite("PostgreSQL store timeouts");

test("the timeouts default to 5 s and 60 s, read from the environment with precise errors", () => {
  assert.equal(databaseTimeoutsFrom({}), { connectMs: 5_000, statementMs: 60_000 });
  assert.equal(DEFAULT_DATABASE_TIMEOUTS, { connectMs: 5_000, statementMs: 60_000 });
  assert.equal(
    databaseTimeoutsFrom({
      PBX_DATABASE_CONNECT_TIMEOUT_MS: " 2500 ",
      PBX_DATABASE_STATEMENT_TIMEOUT_MS: "300000",
    }),
    { connectMs: 2_500, statementMs: 300_000 },
  );
  assert.equal(databaseTimeoutsFrom({ PBX_DATABASE_STATEMENT_TIMEOUT_MS: "0" }).statementMs, 0);
  for (const value of ["0", "99", "600001", "-1", "2.5", "5s", "1e4"]) {
    assert.throws(
      () => databaseTimeoutsFrom({ PBX_DATABASE_CONNECT_TIMEOUT_MS: value }),
      (error: Error) =>
        error.message ===
        `invalid PBX_DATABASE_CONNECT_TIMEOUT_MS: ${value} (need a whole number of milliseconds 100-600000)`,
      value,
    );
  }
  for (const value of ["50", "86400001", "-5", "1.5", "one minute"]) {
    assert.throws(
      () => databaseTimeoutsFrom({ PBX_DATABASE_STATEMENT_TIMEOUT_MS: value }),
      (error: Error) =>
        error.message ===
        `invalid PBX_DATABASE_STATEMENT_TIMEOUT_MS: ${value} (need a whole number of milliseconds 100-86400000 or 0 for none)`,
      value,
    );
  }
});

test("the store location carries the timeouts, and a bad one fails even on SQLite", () => {
  assert.equal(
    storeLocationFrom(
      { PBX_DATABASE_URL: "postgres://db/pbx", PBX_DATABASE_CONNECT_TIMEOUT_MS: "3000" },
      "/d/pbx.db",
    ),
    {
      kind: "postgres",
      url: "postgres://db/pbx",
      poolSize: 10,
      timeouts: { connectMs: 3_000, statementMs: 60_000 },
    },
  );
  // A typo is reported at start-up, not the day the store moves to PostgreSQL.
  assert.throws(
    () => storeLocationFrom({ PBX_DATABASE_STATEMENT_TIMEOUT_MS: "soon" }, "/d/pbx.db"),
    /invalid PBX_DATABASE_STATEMENT_TIMEOUT_MS: soon/,
  );
});

test("the pool: connect bound, keepalive, server statement and idle-transaction bounds, the client's a little later", () => {
  const config = poolConfig("postgres://db/pbx", 4, { connectMs: 2_000, statementMs: 30_000 });
  assert.is(config.connectionTimeoutMillis, 2_000);
  assert.is(config.keepAlive, true);
  assert.is(config.statement_timeout, 30_000);
  assert.is(config.idle_in_transaction_session_timeout, 30_000);
  assert.is(config.query_timeout, 35_000, "the server's clearer error comes first");
  const migrating = poolConfig("postgres://db/pbx", 4, { statementMs: 0 });
  assert.is(migrating.connectionTimeoutMillis, 5_000, "the connect bound stays");
  for (const key of ["statement_timeout", "idle_in_transaction_session_timeout", "query_timeout"]) {
    assert.not.ok(key in migrating, `${key} is off for migrations`);
  }
});

/** A loopback TCP server that accepts connections and never sends a byte. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    port: address.port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test("a server that accepts and never answers fails the query at the connect timeout, as an outage", async () => {
  const silent = await silentServer();
  const db = openPostgres(`postgres://pbx@127.0.0.1:${silent.port}/pbx`, 2, { connectMs: 300 });
  try {
    const started = Date.now();
    // A guard far beyond the timeout: without it the query would wait for TCP (minutes).
    let guard: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      sql`select 1`.execute(db).then(
        () => "answered",
        (error: unknown) => error,
      ),
      new Promise((resolve) => {
        guard = setTimeout(() => resolve("still waiting after 10 s"), 10_000);
      }),
    ]);
    clearTimeout(guard);
    const waited = Date.now() - started;
    assert.instance(outcome, Error, String(outcome));
    assert.match((outcome as Error).message, /timeout/i);
    assert.ok(isStoreUnavailable(outcome), "held and retried by the ingest, not dropped");
    assert.ok(waited >= 250, `it waited for the timeout (${waited} ms), not a refusal`);
  } finally {
    await db.destroy();
    await silent.close();
  }
});

/**
 * A loopback TCP proxy to host:port that, once frozen, passes nothing more either way and closes
 * nothing: a database host that silently drops packets, as the client sees it.
 */
async function freezingProxy(host: string, port: number) {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server = createServer((inbound) => {
    const outbound = connect(port, host);
    for (const [from, to] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      sockets.add(from);
      from.on("error", () => {});
      from.on("data", (chunk) => {
        if (!frozen) to.write(chunk);
      });
      from.on("end", () => {
        if (!frozen) to.end();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    port: address.port,
    freeze() {
      frozen = true;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (testBackend() === "postgres") {
  test("a server gone silent mid-connection: the query fails just past the statement bound, and the handle closes", async () => {
    const place = await freshStoreLocation("/nonexistent/unused.db");
    const location = place.location;
    if (location.kind !== "postgres") throw new Error("a PostgreSQL run gives a PostgreSQL store");
    const target = new URL(location.url);
    const proxy = await freezingProxy(target.hostname, Number(target.port));
    const url = new URL(location.url);
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    const db = openPostgres(url.toString(), 1, { statementMs: 200 });
    try {
      assert.is((await sql<{ ok: number }>`select 1 as ok`.execute(db)).rows[0]?.ok, 1);
      proxy.freeze();
      const started = Date.now();
      const error = await sql`select 1`.execute(db).then(
        () => null,
        (failure: unknown) => failure,
      );
      assert.is((error as Error | null)?.message, "Query read timeout");
      assert.ok(isStoreUnavailable(error), "an outage: held and retried by the ingest");
      assert.ok(Date.now() - started >= 5_000, "the server's own cancel was given its chance");
    } finally {
      await db.destroy();
      await proxy.close();
      await place.drop();
    }
  });

  test("a statement past the statement timeout fails with PostgreSQL's clear error, not an outage", async () => {
    const place = await freshStoreLocation("/nonexistent/unused.db");
    const location = place.location;
    if (location.kind !== "postgres") throw new Error("a PostgreSQL run gives a PostgreSQL store");
    const db = openStoreHandle({ ...location, timeouts: { statementMs: 200 } });
    try {
      const error = await sql`select pg_sleep(3)`.execute(db).then(
        () => null,
        (failure: unknown) => failure,
      );
      assert.is((error as { code?: string }).code, "57014");
      assert.is((error as Error).message, "canceling statement due to statement timeout");
      assert.not.ok(isStoreUnavailable(error), "a statement too slow is rejected, not retried");
      const row = await sql<{ ok: number }>`select 1 as ok`.execute(db);
      assert.is(row.rows[0]?.ok, 1, "the connection is still usable");
    } finally {
      await db.destroy();
    }
    const migrating = openMigrationHandle({ ...location, timeouts: { statementMs: 200 } });
    try {
      await sql`select pg_sleep(0.5)`.execute(migrating);
      const shown = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(
        migrating,
      );
      assert.is(shown.rows[0]?.statement_timeout, "0", "migrations run with no statement timeout");
    } finally {
      await migrating.destroy();
      await place.drop();
    }
  });
}

test.run();
