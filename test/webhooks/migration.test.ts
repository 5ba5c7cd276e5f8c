// The migration of the webhook tables: part of the store's migrations, and down/up round-trips.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { down, up } from "../../src/store/migrations/0701-webhooks.js";
import { freshStore } from "../store/helpers.js";

test("the store's migrations create both tables, down removes them, up again works", async () => {
  const store = await freshStore();
  try {
    const tables = async () =>
      (await store.db.introspection.getTables())
        .map((t) => t.name)
        .filter((n) => n.startsWith("webhook"));
    assert.equal((await tables()).sort(), ["webhook_deliveries", "webhooks"]);
    await down(store.db);
    assert.equal(await tables(), []);
    await up(store.db);
    assert.equal((await tables()).sort(), ["webhook_deliveries", "webhooks"]);
  } finally {
    await store.close();
  }
});

test.run();
