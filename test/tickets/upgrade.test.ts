// A store upgraded with calls already in it: the poller starts after them (migration 2401 sets
// its cursor), so the upgrade opens no ticket for an old call; a fresh store starts at 0.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { down, up } from "../../src/store/migrations/2401-tickets.js";
import { createTicketPollerRepository } from "../../src/store/ticket-intake-repository.js";
import { freshStore } from "../store/helpers.js";
import { storeRecord } from "./helpers.js";

test("migration 2401 starts the poller's cursor after the calls already stored", async () => {
  const store = await freshStore();
  try {
    assert.is(await createTicketPollerRepository(store.db).cursor(), 0);
    await storeRecord(store.db, { linkedid: "old-1", channel: "PJSIP/org_x_trunk-1" });
    await storeRecord(store.db, { linkedid: "old-2", channel: "PJSIP/org_x_trunk-2" });
    const last = await store.db
      .selectFrom("call_records")
      .select((eb) => eb.fn.max("id").as("id"))
      .executeTakeFirstOrThrow();
    // As if the store had been migrated up to 2101 with these calls, then upgraded.
    await down(store.db as never);
    await up(store.db as never);
    assert.is(await createTicketPollerRepository(store.db).cursor(), Number(last.id));
  } finally {
    await store.close();
  }
});

test.run();
