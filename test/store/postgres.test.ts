// The PostgreSQL side of the store (issue 23): PBX_DATABASE_URL's reading, the type parsers that
// make PostgreSQL answer what SQLite answers, and, on a `npm run test:pg` run, the schema the
// shared migrations build there (timestamptz instants, org-led tenant indexes).
import { sql } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  DEFAULT_DATABASE_POOL_SIZE,
  DEFAULT_DATABASE_TIMEOUTS,
  storeLocationFrom,
} from "../../src/config.js";
import { storeGeneration } from "../../src/store/database.js";
import { isoFromTimestamptz } from "../../src/store/database-postgres.js";
import { freshStore, insertOrg } from "./helpers.js";
import { testBackend } from "./test-database.js";

test("PBX_DATABASE_URL selects PostgreSQL; unset, the data dir's SQLite file", () => {
  assert.equal(storeLocationFrom({}, "/d/pbx.db"), { kind: "sqlite", file: "/d/pbx.db" });
  assert.equal(storeLocationFrom({ PBX_DATABASE_URL: " postgres://pbx@db/pbx " }, "/d/pbx.db"), {
    kind: "postgres",
    url: "postgres://pbx@db/pbx",
    poolSize: DEFAULT_DATABASE_POOL_SIZE,
    timeouts: DEFAULT_DATABASE_TIMEOUTS,
  });
  assert.equal(
    storeLocationFrom(
      { PBX_DATABASE_URL: "postgresql://db/pbx", PBX_DATABASE_POOL_SIZE: "25" },
      "/d/pbx.db",
    ),
    {
      kind: "postgres",
      url: "postgresql://db/pbx",
      poolSize: 25,
      timeouts: DEFAULT_DATABASE_TIMEOUTS,
    },
  );
  assert.throws(
    () => storeLocationFrom({ PBX_DATABASE_URL: "mysql://db/pbx" }, "/d/pbx.db"),
    /invalid PBX_DATABASE_URL: need a postgres:\/\/ or postgresql:\/\/ URL/,
  );
  for (const size of ["0", "-1", "2.5", "many"]) {
    assert.throws(
      () => storeLocationFrom({ PBX_DATABASE_POOL_SIZE: size }, "/d/pbx.db"),
      /invalid PBX_DATABASE_POOL_SIZE: .* \(need a whole number of connections 1-1000\)/,
    );
  }
});

test("timestamptz text becomes the store's ISO string with milliseconds", () => {
  assert.is(isoFromTimestamptz("2026-01-01 00:00:00+00"), "2026-01-01T00:00:00.000Z");
  assert.is(isoFromTimestamptz("2026-03-09 17:05:09.1+00"), "2026-03-09T17:05:09.100Z");
  assert.is(isoFromTimestamptz("2026-03-09 17:05:09.123456+00"), "2026-03-09T17:05:09.123Z");
});

test("an instant and a count read back exactly as SQLite answers them", async () => {
  const store = await freshStore();
  try {
    await insertOrg(store.db, "o1");
    const row = await store.db
      .selectFrom("organizations")
      .select(["created_at", (eb) => eb.fn.countAll<number>().as("n")])
      .groupBy("created_at")
      .executeTakeFirstOrThrow();
    assert.is(row.created_at, "2026-01-01T00:00:00.000Z");
    assert.is(row.n, 1);
    // A later instant compares as a later instant.
    const later = await store.db
      .selectFrom("organizations")
      .select("id")
      .where("created_at", "<", "2026-01-01T00:00:00.001Z")
      .execute();
    assert.equal(later, [{ id: "o1" }]);
  } finally {
    await store.close();
  }
});

if (testBackend() === "postgres") {
  test("PostgreSQL reads are not cached while the handle does not follow its change feed (no generation)", async () => {
    const store = await freshStore();
    try {
      assert.is(storeGeneration(store.db), null);
    } finally {
      await store.close();
    }
  });

  test("every instant column is timestamptz; nothing else is", async () => {
    const store = await freshStore();
    try {
      const { rows } = await sql<{ table_name: string; column_name: string; data_type: string }>`
        select table_name, column_name, data_type from information_schema.columns
        where table_schema = current_schema() and table_name not like 'kysely_%'`.execute(store.db);
      const instant = /(_at|^calldate|^answerdate|^enddate|^at|^last_delivery|_until)$/;
      for (const c of rows) {
        const where = `${c.table_name}.${c.column_name}`;
        if (instant.test(c.column_name)) {
          assert.is(c.data_type, "timestamp with time zone", where);
        } else {
          assert.is.not(c.data_type, "timestamp with time zone", where);
        }
      }
    } finally {
      await store.close();
    }
  });

  test("every index of a tenant table is led by org_id, but the platform-wide ones", async () => {
    // Unique and primary keys are platform-wide (global ids and numbers); these are the
    // background workers' and the admin's, read across every org on purpose.
    const platformWide = new Set([
      "deploy_jobs_unfinished",
      "did_requests_status",
      "dids_pool_status",
      "org_users_email",
      "org_users_subject",
      // A node's load: placement counts the orgs on a node, across every org (issue 25).
      "org_placements_node",
      "org_placements_standby",
      "ticket_intake_status",
      "ticket_messages_due",
      "ticket_poller_posts_due",
      "webhook_deliveries_claim",
      "webhook_deliveries_due",
    ]);
    const store = await freshStore();
    try {
      const { rows } = await sql<{ index: string; unique: boolean; def: string }>`
        select i.relname as index, x.indisunique as unique, pg_get_indexdef(i.oid) as def
        from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
        where t.relnamespace = current_schema()::regnamespace and exists (
          select 1 from information_schema.columns c
          where c.table_schema = current_schema() and c.table_name = t.relname
            and c.column_name = 'org_id')`.execute(store.db);
      const unled = rows
        .filter((r) => !r.unique && !/\(org_id\b/.test(r.def))
        .map((r) => r.index)
        .filter((name) => !platformWide.has(name));
      assert.equal(unled, []);
      assert.ok(rows.length > 30, "the tenant tables' indexes were read");
    } finally {
      await store.close();
    }
  });
}

test.run();
