// The ticket poller's lookup of a call's records (src/store/ticket-intake-repository.ts,
// `recordsOfCallsQuery`): by org and linkedid, so two orgs' calls that share a linkedid never mix
// and the index call_records_org_linkedid serves it, where a lookup by linkedid alone read the
// whole table (a full scan at a million records).
import { CompiledQuery, sql } from "kysely";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Db } from "../../src/store/database.js";
import { storeDialect } from "../../src/store/dialect.js";
import {
  createTicketPollerRepository,
  recordsOfCallsQuery,
} from "../../src/store/ticket-intake-repository.js";
import { freshStore, insertOrg } from "../store/helpers.js";
import { storeRecord } from "./helpers.js";

const ORG_A = "aaaaaaaa-0000-4000-8000-0000000000a1";
const ORG_B = "bbbbbbbb-0000-4000-8000-0000000000b2";

type Store = Awaited<ReturnType<typeof freshStore>>;
const test = suite<{ store: Store }>("ticket poller lookup");

test.before.each(async (context) => {
  context.store = await freshStore();
  await insertOrg(context.store.db, ORG_A, "Acme", "org_a_");
  await insertOrg(context.store.db, ORG_B, "Bravo", "org_b_");
});

test.after.each(async ({ store }) => {
  await store.close();
});

/** The plan the store chooses for the poller's lookup, as text. */
async function planOf(db: Db): Promise<string> {
  const query = recordsOfCallsQuery(db, ORG_A, ["shared-1", "shared-2"]).compile();
  if (storeDialect(db) === "sqlite") {
    const rows = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]),
    );
    return rows.rows.map((row) => row.detail).join("\n");
  }
  // PostgreSQL plans by statistics: over an empty table every org-led index costs the same.
  // Two orgs' 5,000 records each (all to one dst, as a busy DID's are), analysed, give it the
  // choice a large store gives it.
  await sql`INSERT INTO call_records (org_id, uniqueid, sequence, linkedid, calldate, src, dst,
      dcontext, clid, channel, dstchannel, lastapp, lastdata, duration, billsec, disposition,
      accountcode, peeraccount, direction, ingested_at)
    SELECT CASE WHEN n % 2 = 0 THEN ${ORG_A} ELSE ${ORG_B} END, 'u.' || n, 1, 'l.' || n,
      now(), '919800000000', '100', 'incoming', '', 'PJSIP/x-' || n, '', 'Dial', '', 30, 0,
      'NO ANSWER', '', '', 'inbound', now()
    FROM generate_series(1, 10000) AS n`.execute(db);
  await sql`ANALYZE call_records`.execute(db);
  const rows = await db.executeQuery<{ "QUERY PLAN": string }>(
    CompiledQuery.raw(`EXPLAIN ${query.sql}`, [...query.parameters]),
  );
  return rows.rows.map((row) => row["QUERY PLAN"]).join("\n");
}

test("the lookup is served by the (org_id, linkedid) index, not a scan of every record", async ({
  store,
}) => {
  const plan = await planOf(store.db);
  assert.match(plan, /call_records_org_linkedid/, plan);
  if (storeDialect(store.db) === "sqlite") {
    assert.match(
      plan,
      /SEARCH call_records USING INDEX call_records_org_linkedid \(org_id=\? AND linkedid=\?\)/,
      plan,
    );
    assert.not.match(plan, /SCAN call_records/, plan);
  } else {
    assert.match(plan, /Index Cond: .*org_id/, plan);
  }
});

test("two orgs with the same linkedid: each org's lookup returns its own records only", async ({
  store,
}) => {
  await storeRecord(store.db, { linkedid: "shared-1", channel: "PJSIP/org_a_trunk-00000001" });
  await storeRecord(store.db, { linkedid: "shared-1", channel: "PJSIP/org_b_trunk-00000002" });
  await storeRecord(store.db, { linkedid: "shared-1", channel: "PJSIP/org_a_101-00000003" });
  const poller = createTicketPollerRepository(store.db);
  const ofA = await poller.recordsOfCalls(ORG_A, ["shared-1"]);
  const ofB = await poller.recordsOfCalls(ORG_B, ["shared-1"]);
  assert.equal(
    ofA.map((r) => [r.org_id, r.channel]),
    [
      [ORG_A, "PJSIP/org_a_trunk-00000001"],
      [ORG_A, "PJSIP/org_a_101-00000003"],
    ],
  );
  assert.equal(
    ofB.map((r) => [r.org_id, r.channel]),
    [[ORG_B, "PJSIP/org_b_trunk-00000002"]],
  );
});

test.run();
