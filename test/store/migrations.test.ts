// The schema: migrations in order, re-runnable, and reversible.
import { Migrator, NO_MIGRATIONS } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { migrateToLatest, openStore } from "../../src/store/database.js";
import { migrations } from "../../src/store/migrations/index.js";
import { freshStore } from "./helpers.js";

test("every migration runs once, in its listed order, and a second run does nothing", async () => {
  const store = await freshStore();
  try {
    const names = migrations.map(([name]) => name);
    assert.equal([...names].sort(), names, "names must sort in run order (Kysely sorts by name)");
    const tables = (await store.db.introspection.getTables()).map((t) => t.name).sort();
    for (const table of [
      "api_keys",
      "call_records",
      "calls",
      "did_requests",
      "dids",
      "extension_claims",
      "ivr_options",
      "ivrs",
      "org_users",
      "organizations",
      "outbound_route_patterns",
      "outbound_routes",
      "queue_members",
      "queues",
      "trunks",
      "users",
    ]) {
      assert.ok(tables.includes(table), `missing table ${table}`);
    }
    assert.equal(await migrateToLatest(store.db), []);
  } finally {
    await store.close();
  }
});

test("migrations are listed in strictly increasing name order (Kysely refuses any other)", () => {
  const names = migrations.map(([name]) => name);
  assert.equal(names, [...names].sort());
  assert.is(new Set(names).size, names.length);
});

test("the store file is in WAL mode with foreign keys on", async () => {
  const store = await freshStore({ sqliteOnly: true });
  try {
    const { sql } = await import("kysely");
    const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
    assert.is(mode.rows[0]?.journal_mode, "wal");
    const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(store.db);
    assert.is(fk.rows[0]?.foreign_keys, 1);
  } finally {
    await store.close();
  }
});

test("the store keeps a 64 MB page cache and 10,000-page checkpoints, every commit synced", async () => {
  const first = await freshStore({ sqliteOnly: true });
  await first.db.destroy();
  // Reopened: a file already in WAL mode is where better-sqlite3's build default is NORMAL.
  const db = await openStore(first.file);
  const store = {
    db,
    async close() {
      await db.destroy();
      await first.close();
    },
  };
  try {
    const { sql } = await import("kysely");
    const cache = await sql<{ cache_size: number }>`pragma cache_size`.execute(store.db);
    assert.is(cache.rows[0]?.cache_size, -65536);
    const checkpoint = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(
      store.db,
    );
    assert.is(checkpoint.rows[0]?.wal_autocheckpoint, 10_000);
    // 2 is FULL: the ingest's speed must not come from durability.
    const synchronous = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
    assert.is(synchronous.rows[0]?.synchronous, 2);
  } finally {
    await store.close();
  }
});

test("all migrations can be rolled back to an empty schema", async () => {
  const store = await freshStore();
  try {
    const migrator = new Migrator({
      db: store.db,
      provider: { getMigrations: async () => Object.fromEntries(migrations) },
    });
    const { error } = await migrator.migrateTo(NO_MIGRATIONS);
    assert.is(error, undefined, String(error));
    const tables = (await store.db.introspection.getTables()).map((t) => t.name);
    assert.equal(
      tables.filter((t) => !t.startsWith("kysely_")),
      [],
    );
  } finally {
    await store.close();
  }
});

test.run();
