// The load balancer's probes: /health/live answers while the process does; /health/ready only
// while the store answers, every migration is applied and the process is not shutting down.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Readiness } from "../../src/api/readiness.js";
import { openSqlite } from "../../src/store/database.js";
import { storeChangeFeed } from "../../src/store/database-postgres.js";
import { testBackend } from "../store/test-database.js";
import { startTestApp } from "./helpers.js";

test("live and ready answer 200 on a migrated store; /health keeps its body", async () => {
  const app = await startTestApp();
  try {
    const live = await app.request("GET", "/health/live");
    assert.is(live.status, 200);
    assert.equal(live.body, { status: "ok" });
    const ready = await app.request("GET", "/health/ready");
    assert.is(ready.status, 200);
    assert.equal(ready.body, {
      status: "ready",
      store: "ok",
      migrations: "ok",
      shutting_down: false,
    });
    // On PostgreSQL /health also says whether this replica's cached reads follow the change feed.
    await storeChangeFeed(app.db)?.whenFollowing();
    const health = await app.request("GET", "/health");
    // Its fields are kept; the store it runs on is said too (issue 23).
    assert.equal(health.body, {
      status: "ok",
      store: "ok",
      engine: "files-only",
      database: testBackend(),
      ...(testBackend() === "postgres" ? { change_feed: "following" } : {}),
    });
  } finally {
    await app.close();
  }
});

test("shutting down: ready answers 503 at once, live still 200", async () => {
  const app = await startTestApp();
  try {
    app.pbx.readiness.markShuttingDown();
    const ready = await app.request("GET", "/health/ready");
    assert.is(ready.status, 503);
    assert.equal(ready.body, {
      status: "not ready",
      store: "ok",
      migrations: "ok",
      shutting_down: true,
    });
    assert.is((await app.request("GET", "/health/live")).status, 200);
  } finally {
    await app.close();
  }
});

test("a store with migrations not applied is not ready; a closed store is not either", async () => {
  const db = openSqlite(":memory:");
  const readiness = new Readiness(db);
  assert.equal(await readiness.check(), {
    ready: false,
    store: "ok",
    migrations: "pending",
    shutting_down: false,
  });
  await db.destroy();
  const closed = await readiness.check();
  assert.is(closed.ready, false);
  assert.is(closed.store, "error");
});

test.run();
