// Cached reads are reused only while nothing in the store changed: a write through the same
// handle, a write by another connection to the same file (pbxctl apply beside a server) and a
// rolled-back transaction each end the reuse; transactions never read the cache. A request's view
// (withGenerationPerRequest) reads the generation once and shares the handle's cache.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openSqlite, storeGeneration } from "../../src/store/database.js";
import { cachedRead } from "../../src/store/read-cache.js";
import { withGenerationPerRequest } from "../../src/store/store-generation.js";
import { createUserRepository } from "../../src/store/user-repository.js";
import { freshStore, insertOrg } from "./helpers.js";

const ORG = "11111111-1111-4111-8111-111111111111";

function user(extension: string, name: string) {
  return {
    extension,
    name,
    routing_type: "human" as const,
    status: "active" as const,
    ring_target: "ext" as const,
    phone_number: null,
    ring_time: 30,
    outbound_did: null,
    call_recording: true,
    sip: { md5_cred: "0".repeat(32) },
  };
}

const names = (rows: ReadonlyArray<{ user: { name: string } }>) => rows.map((r) => r.user.name);

test("a repeated read is served from the cache until this handle writes", async () => {
  const store = await freshStore({ sqliteOnly: true });
  try {
    await insertOrg(store.db, ORG);
    const repo = createUserRepository(store.db);
    await repo.insert(ORG, user("2001", "Alice"));
    const first = await repo.listWithContextPrefix(ORG);
    assert.is(await repo.listWithContextPrefix(ORG), first, "same answer, not reloaded");
    await repo.insert(ORG, user("2002", "Bob"));
    const second = await repo.listWithContextPrefix(ORG);
    assert.equal(names(second), ["Alice", "Bob"]);
    await store.db
      .updateTable("users")
      .set({ name: "Alicia" })
      .where("extension", "=", "2001")
      .execute();
    assert.equal(names(await repo.listWithContextPrefix(ORG)), ["Alicia", "Bob"]);
  } finally {
    await store.close();
  }
});

test("a commit by another connection to the same file ends the reuse", async () => {
  const store = await freshStore({ sqliteOnly: true });
  const other = openSqlite(store.file);
  try {
    await insertOrg(store.db, ORG);
    const repo = createUserRepository(store.db);
    assert.equal(names(await repo.listWithContextPrefix(ORG)), []);
    await createUserRepository(other).insert(ORG, user("2001", "From the CLI"));
    assert.equal(names(await repo.listWithContextPrefix(ORG)), ["From the CLI"]);
  } finally {
    await other.destroy();
    await store.close();
  }
});

test("transactions read through; a rolled-back write leaves the right answer", async () => {
  const store = await freshStore({ sqliteOnly: true });
  try {
    await insertOrg(store.db, ORG);
    let loads = 0;
    const read = (db: typeof store.db) =>
      cachedRead(db, "count", async () => {
        loads++;
        return (await db.selectFrom("users").select("id").execute()).length;
      });
    assert.is(await read(store.db), 0);
    assert.is(await read(store.db), 0);
    assert.is(loads, 1);
    await store.db.transaction().execute(async (trx) => {
      assert.is(storeGeneration(trx), null, "a transaction has no generation");
      await read(trx);
      await read(trx);
    });
    assert.is(loads, 3, "each read in the transaction loaded");
    await store.db
      .transaction()
      .execute(async (trx) => {
        await createUserRepository(trx).insert(ORG, user("2001", "Ghost"));
        throw new Error("roll back");
      })
      .catch(() => {});
    assert.is(await read(store.db), 0, "the rolled-back row is not counted");
  } finally {
    await store.close();
  }
});

test("nothing found is not kept: the next read loads again", async () => {
  const store = await freshStore({ sqliteOnly: true });
  try {
    let loads = 0;
    const missing = () =>
      cachedRead(store.db, "missing", async () => {
        loads++;
        return undefined;
      });
    await missing();
    await missing();
    assert.is(loads, 2);
  } finally {
    await store.close();
  }
});

test("a request's view: one generation reading, the handle's cache, and every commit before it seen", async () => {
  const store = await freshStore({ sqliteOnly: true });
  const other = openSqlite(store.file);
  try {
    await insertOrg(store.db, ORG);
    let loads = 0;
    const read = (db: typeof store.db) =>
      cachedRead(db, "names", async () => {
        loads++;
        return names(await createUserRepository(db).listWithContextPrefix(ORG));
      });
    assert.equal(await read(store.db), []);
    const request = withGenerationPerRequest(store.db);
    assert.equal(await read(request), [], "the handle's entry");
    assert.is(loads, 1, "shared with the handle: not loaded again");

    // Another process commits while the request is being answered: the request keeps its
    // reading (one PRAGMA data_version per request); the next request sees the commit.
    await createUserRepository(other).insert(ORG, user("2001", "Revoked meanwhile"));
    assert.is(storeGeneration(request), storeGeneration(request));
    assert.not.equal(storeGeneration(request), storeGeneration(store.db));
    assert.equal(await read(request), [], "as of the request's reading");
    const next = withGenerationPerRequest(store.db);
    assert.equal(await read(next), ["Revoked meanwhile"], "a commit before the request is seen");
    assert.equal(await read(store.db), ["Revoked meanwhile"], "and kept for the handle");
    assert.is(loads, 2);

    await next.transaction().execute(async (trx) => {
      assert.is(storeGeneration(trx), null, "a view's transaction has no generation either");
    });
  } finally {
    await other.destroy();
    await store.close();
  }
});

test.run();
