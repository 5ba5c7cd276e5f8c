// Cached reads on PostgreSQL (issue 23): each store handle follows the other handles' commits
// through its change feed (src/store/change-feed.ts, migration 2960's triggers), so a change
// made through one replica is seen by every other within a second, and a cached read is never
// served while the feed cannot prove it is current. Runs on `npm run test:pg` only (SQLite's
// generation is PRAGMA data_version, tested in test/store/read-cache.test.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type RunningServer, startServer } from "../../src/api/server.js";
import { loadConfig } from "../../src/config.js";
import { noDeploys } from "../../src/domain/ports.js";
import {
  CACHED_TABLES,
  CHANGE_FEED_STALE_AFTER_MS,
  changesCachedTable,
  StoreChangeFeed,
} from "../../src/store/change-feed.js";
import {
  changeFeedState,
  type Db,
  followStoreChanges,
  openSqlite,
  openStore,
  storeGeneration,
} from "../../src/store/database.js";
import { storeChangeFeed } from "../../src/store/database-postgres.js";
import { createLeaseRepository } from "../../src/store/lease-repository.js";
import { cachedRead } from "../../src/store/read-cache.js";
import { FakeClock } from "../deploy/helpers.js";
import { insertOrg } from "./helpers.js";
import { freshStoreLocation, testBackend, testPostgresUrl } from "./test-database.js";

const ORG = "11111111-1111-4111-8111-111111111111";

/** The count of changes in a generation `<epoch>:<changes>`. */
function changesOf(generation: string | null): number {
  assert.ok(generation, "the feed follows");
  return Number(generation.split(":")[1]);
}

async function twoHandles(): Promise<{ a: Db; b: Db; url: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "pbx-feed-"));
  const store = await freshStoreLocation(join(dir, "pbx.db"));
  const a = await openStore(store.location);
  const b = await openStore(store.location);
  await followStoreChanges(a);
  await followStoreChanges(b);
  return {
    a,
    b,
    url: store.location.kind === "postgres" ? store.location.url : "",
    async close() {
      await a.destroy();
      await b.destroy();
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("the statement check counts writes naming a cached table, never selects or other tables", () => {
  assert.ok(changesCachedTable({ kind: "UpdateQueryNode" }, 'update "users" set "name" = $1'));
  assert.ok(changesCachedTable({ kind: "DeleteQueryNode" }, 'delete from "api_keys" where'));
  assert.ok(changesCachedTable({ kind: "RawNode" }, "UPDATE organizations SET status = $1"));
  assert.not.ok(changesCachedTable({ kind: "SelectQueryNode" }, 'select * from "users"'));
  assert.not.ok(changesCachedTable({ kind: "InsertQueryNode" }, 'insert into "org_users"'));
  assert.not.ok(changesCachedTable({ kind: "InsertQueryNode" }, 'insert into "leases"'));
  assert.not.ok(changesCachedTable({ kind: "RawNode" }, "select count(*) from users"));
});

if (testBackend() === "postgres") {
  test("every cached table, and only those, carries the change trigger", async () => {
    const handles = await twoHandles();
    try {
      const { rows } = await sql<{ table: string }>`
        select event_object_table as table from information_schema.triggers
        where trigger_name like '%_change_notify' group by event_object_table
        order by event_object_table`.execute(handles.a);
      assert.equal(
        rows.map((r) => r.table),
        [...CACHED_TABLES].sort(),
      );
    } finally {
      await handles.close();
    }
  });

  test("another handle's commit to a cached table moves the generation; rolled-back and uncached writes do not", async () => {
    const { a, b, close } = await twoHandles();
    try {
      await insertOrg(a, ORG);
      await storeChangeFeed(b)!.caughtUp();
      const before = storeGeneration(b);
      const seen = storeChangeFeed(b)!.nextChange();
      await a.updateTable("organizations").set({ name: "Renamed" }).execute();
      await seen;
      const after = storeGeneration(b);
      assert.is.not(after, before);

      // Notifications arrive in commit order: once the last change below is counted, anything
      // the first two had notified would have been counted before it.
      await createLeaseRepository(a).acquire("deployer:files", "a", new Date(), 4000);
      await a
        .transaction()
        .execute(async (trx) => {
          await trx.updateTable("users").set({ name: "Lost" }).execute();
          throw new Error("rolled back");
        })
        .catch(() => {});
      const next = storeChangeFeed(b)!.nextChange();
      await a.updateTable("api_keys").set({ name: "k" }).execute();
      await next;
      assert.is(changesOf(storeGeneration(b)), changesOf(after) + 1);
    } finally {
      await close();
    }
  });

  test("this handle's own commits move its generation at once, before the notification is back", async () => {
    const { a, close } = await twoHandles();
    try {
      await insertOrg(a, ORG);
      const g0 = changesOf(storeGeneration(a));
      await a.updateTable("organizations").set({ name: "One" }).execute();
      const g1 = changesOf(storeGeneration(a));
      assert.ok(g1 > g0, "an own write outside a transaction");
      await a.transaction().execute(async (trx) => {
        await trx.updateTable("users").set({ name: "Two" }).execute();
      });
      assert.ok(changesOf(storeGeneration(a)) > g1, "an own transaction, at its commit");
    } finally {
      await close();
    }
  });

  test("no generation while the last proof of the feed is older than the bound, nor while it reconnects; a new connection never reuses what was cached", async () => {
    const adminUrl = testPostgresUrl()!;
    const { url, close } = await twoHandles();
    const timers = new FakeClock();
    const feed = new StoreChangeFeed({ connection: { connectionString: url }, timers });
    try {
      await feed.start();
      assert.ok(feed.generation(), "proven by its first ping");
      // Time passes and the heartbeat's ping (sent at 250 ms) has not come back yet: the last
      // proof is from 0 ms, older than the bound, so nothing may be cached.
      timers.advance(CHANGE_FEED_STALE_AFTER_MS + 50);
      assert.is(feed.generation(), null);
      await feed.whenFollowing();
      assert.ok(feed.generation(), "the ping sent at 250 ms came back: proven again");
      const epoch = feed.generation()!.split(":")[0];

      // The LISTEN connection dies: null at once, and a new epoch once back.
      const pid = await feed.backendPid();
      const lost = new Promise<void>((resolve) => {
        const check = () => (feed.generation() === null ? resolve() : setImmediate(check));
        check();
      });
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await admin.end();
      await lost;
      assert.is(feed.generation(), null, "no caching while the connection is down");
      timers.advance(1000); // the reconnection delay
      await feed.whenFollowing();
      assert.is.not(feed.generation()!.split(":")[0], epoch, "a new epoch");
    } finally {
      await feed.stop();
      await close();
    }
    assert.is(feed.generation(), null, "stopped");
  });

  test("cachedRead reloads after another handle's change and while the feed does not follow", async () => {
    const { a, b, close } = await twoHandles();
    try {
      await insertOrg(a, ORG);
      await storeChangeFeed(b)!.caughtUp();
      let loads = 0;
      const read = () =>
        cachedRead(b, "org-name", async () => {
          loads++;
          return (await b.selectFrom("organizations").select("name").executeTakeFirst())?.name;
        });
      assert.is(await read(), "Acme");
      assert.is(await read(), "Acme");
      assert.is(loads, 1, "the second read is cached");
      const seen = storeChangeFeed(b)!.nextChange();
      await a.updateTable("organizations").set({ name: "Renamed" }).execute();
      await seen;
      assert.is(await read(), "Renamed");
      assert.is(loads, 2);
      await storeChangeFeed(b)!.stop();
      await read();
      await read();
      assert.is(loads, 4, "not following: every read loads");
    } finally {
      await close();
    }
  });

  test("two replicas: a revoked API key and a deleted user are refused by the other as soon as its feed hears of it; cached answers are byte-identical to uncached ones", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pbx-feed-replicas-"));
    const store = await freshStoreLocation(join(dataDir, "pbx.db"));
    const url = store.location.kind === "postgres" ? store.location.url : "";
    const logger = pino({ level: "silent" });
    const start = (name: string) =>
      startServer({
        config: loadConfig(
          { PBX_DATABASE_URL: url, PBX_ADMIN_PASSWORD: "feed-password", PBX_REPLICA_ID: name },
          { dataDir, port: 0, host: "127.0.0.1" },
        ),
        logger,
        env: {},
        deployScheduler: noDeploys,
        metrics: null,
      });
    const a: RunningServer = await start("a");
    const b: RunningServer = await start("b");
    const call = async (
      server: RunningServer,
      method: string,
      path: string,
      headers = {},
      body?: unknown,
    ) => {
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method,
        headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, text: await res.text() };
    };
    try {
      const admin = JSON.parse(
        (
          await call(
            a,
            "POST",
            "/admin/auth",
            {},
            {
              admin_username: "admin",
              admin_password: "feed-password",
            },
          )
        ).text,
      );
      const org = JSON.parse(
        (
          await call(
            a,
            "POST",
            "/organizations",
            { authorization: `Bearer ${admin.token}` },
            { name: "Acme" },
          )
        ).text,
      );
      const orgKey = { "x-api-key": org.api_key };
      const key = JSON.parse(
        (await call(a, "POST", "/api-keys", orgKey, { name: "dashboard" })).text,
      );
      const user = JSON.parse(
        (await call(a, "POST", "/users", orgKey, { extension: "101", name: "Ann" })).text,
      );
      await call(a, "POST", "/users", orgKey, { extension: "102", name: "Bob" });
      const bFeed = storeChangeFeed(b.pbx.deps.db)!;
      assert.ok(bFeed.following, "b caches its reads");

      // b's first answer reads the store, the second is cached (nothing changed in between):
      // the same bytes.
      await bFeed.caughtUp();
      const generation = storeGeneration(b.pbx.deps.db);
      assert.ok(generation, "b follows the store's changes");
      const first = await call(b, "GET", "/users", { "x-api-key": key.api_key });
      assert.is(first.status, 200);
      const cached = await call(b, "GET", "/users", { "x-api-key": key.api_key });
      assert.is(cached.text, first.text);
      assert.is(storeGeneration(b.pbx.deps.db), generation, "the second answer was the cached one");

      // A user deleted through a is gone from b's listing once b heard of it.
      let heard = bFeed.nextChange();
      assert.is((await call(a, "DELETE", `/users/${user.id}`, orgKey)).status, 204);
      await heard;
      const listed = JSON.parse((await call(b, "GET", "/users", orgKey)).text);
      assert.equal(
        listed.data.map((u: { extension: string }) => u.extension),
        ["102"],
      );
      assert.is((await call(b, "GET", `/users/${user.id}`, orgKey)).status, 404);

      // The key revoked through a is refused by b.
      heard = bFeed.nextChange();
      assert.is((await call(a, "POST", `/api-keys/${key.id}/revoke`, orgKey)).status, 200);
      await heard;
      const refused = await call(b, "GET", "/users", { "x-api-key": key.api_key });
      assert.is(refused.status, 401);
      assert.equal(JSON.parse(refused.text), {
        error: "Invalid authentication or organization not active",
      });
    } finally {
      await b.close();
      await a.close();
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("changeFeedState says whether cached reads are in use: following while proven, behind once the feed stopped", async () => {
    const handles = await twoHandles();
    try {
      await storeChangeFeed(handles.a)?.whenFollowing();
      assert.is(changeFeedState(handles.a), "following");
      await storeChangeFeed(handles.a)?.stop();
      assert.is(changeFeedState(handles.a), "behind");
    } finally {
      await handles.close();
    }
  });
}

test("changeFeedState is null on SQLite, which has no feed", () => {
  const db = openSqlite(":memory:");
  try {
    assert.is(changeFeedState(db), null);
  } finally {
    void db.destroy();
  }
});

test.run();
