// Realtime PJSIP at scale on the shared Asterisk 22 and a throwaway PostgreSQL 15: with 1,000
// orgs of 50 users as rows (written in bulk straight from the compiler's realtime output, not
// through the API), the engine boots with no WARNING or ERROR and never reads those tables while
// booting but one qualified query that finds none of them: `allow_unqualified_fetch=no` on the
// endpoint, auth and AOR wizards leaves nothing that walks them, so the rows cost the boot nothing. One of the 50,000 users then registers, its
// objects fetched by id on that first REGISTER. The boot times are printed (never asserted): the
// machine is shared, and docs/engine.md gives the figures.

import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { syntheticOrg, TARGET_SIZE } from "../../bench/synthetic-org.js";
import { compileAll } from "../../src/compiler/index.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import type { OrgState } from "../../src/model/org-state.js";
import { sipDigest } from "../../src/model/secrets.js";
import { startBaresip } from "./baresip.js";
import { boot } from "./helpers.js";
import type { Postgres } from "./postgres.js";
import { realtimeForm, startRealtimeDatabase, writeRows } from "./realtime-rows.js";

const ORGS = 1000;
/** The one user of the 50,000 that registers, with a password the test knows. */
const CHOSEN = { org: 777, extension: "1042", password: "pw-chosen-1042" };

interface Context {
  db: Postgres;
  engine: AsteriskInstance;
  chosen: string;
  bootMs: number;
  /** The statements that read an object table while the engine booted. */
  bootReads: string[];
}

const test = suite<Context>("realtime pjsip: boot over 1,000 orgs of rows");

/**
 * The `index`-th bench org's users only: its trunk's outbound registration would be a row that
 * res_pjsip_outbound_registration loads (and sends) at every boot by design, which is not what
 * this measures; users' endpoints, auths and AORs are the 50,000 objects.
 */
function usersOnly(index: number): OrgState {
  const org = syntheticOrg(index, { ...TARGET_SIZE, queues: 0, ivrs: 0, dids: 0 });
  return { ...org, trunks: [], outbound_routes: [] };
}

/** The statements of PostgreSQL's log (from `since`) that read a PJSIP object table. */
function objectReads(db: Postgres, since: number): string[] {
  return db
    .log()
    .slice(since)
    .split("\n")
    .filter((line) => /\bFROM ps_(endpoints|auths|aors)\b/i.test(line));
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024);
}

test.before(async (context) => {
  const orgs = Array.from({ length: ORGS }, (_, i) => usersOnly(i));
  const chosenOrg = orgs[CHOSEN.org]!;
  const prefix = chosenOrg.org.context_prefix;
  context.chosen = `${prefix}${CHOSEN.extension}`;
  chosenOrg.users = chosenOrg.users.map((user) =>
    user.extension === CHOSEN.extension
      ? { ...user, sip: { md5_cred: sipDigest(context.chosen, CHOSEN.password) } }
      : user,
  );
  // The generated tree is the chosen user's org alone (its dialplan, its identify-only
  // pjsip.conf): what is measured is the rows.
  const files = realtimeForm(
    [chosenOrg],
    compileAll([chosenOrg], { environment: "prod", staging_endpoint: "staging-tunnel" }).files,
  ).files;
  const { rows } = realtimeForm(orgs, []);
  assert.is(rows.filter((row) => row.table === "ps_endpoints").length, ORGS * 50);
  context.db = await startRealtimeDatabase();
  await writeRows(context.db, rows);
  const count = await context.db.sql(
    "SELECT (SELECT count(*) FROM ps_endpoints) + (SELECT count(*) FROM ps_auths) + (SELECT count(*) FROM ps_aors);",
  );
  assert.is(Number(count.trim()), ORGS * 50 * 3);
  const before = context.db.log().length;
  const started = performance.now();
  context.engine = await boot(files, { pjsipDatabaseUrl: context.db.url });
  context.bootMs = performance.now() - started;
  console.log(
    `\n  realtime boot over ${ORGS * 50} users' rows: ${Math.round(context.bootMs)} ms to fully booted, RSS ${rssMb(context.engine.pid)} MB`,
  );
  context.bootReads = objectReads(context.db, before);
});

test.after(async (context) => {
  await context.engine?.stop();
  await context.db?.stop();
});

test("the engine boots over 50,000 users' rows with no WARNING/ERROR and without reading them", async (context) => {
  assert.equal(context.engine.problems(), [], context.engine.problems().join("\n"));
  // The one read of an object table while booting is qualified: the endpoints with mailboxes
  // (unsolicited MWI's start-up), which pbxctl's rows never set, so it returns none of them.
  assert.is(context.bootReads.length, 1, context.bootReads.join("\n"));
  assert.match(context.bootReads[0]!, "SELECT * FROM ps_endpoints WHERE mailboxes != ''");
  const withMailboxes = await context.db.sql(
    "SELECT count(*) FROM ps_endpoints WHERE mailboxes != '';",
  );
  assert.is(withMailboxes.trim(), "0");
  // Nothing walked the tables: the unqualified listing is empty, one user is still found by id.
  assert.match(await context.engine.cli("pjsip show endpoints"), "No objects found.");
});

test("one of the 50,000 users registers: its first REGISTER fetches its objects by id", async (context) => {
  const since = context.db.log().length;
  const phone = await startBaresip({
    user: context.chosen,
    password: CHOSEN.password,
    registrar: `127.0.0.1:${context.engine.sipPort}`,
  });
  try {
    const event = await phone.waitForEvent((e) => /^REGISTER_(OK|FAIL)$/.test(e.type));
    assert.is(event.type, "REGISTER_OK", phone.output());
  } finally {
    await phone.stop();
  }
  const reads = objectReads(context.db, since);
  assert.ok(reads.length > 0, "fetched on demand");
  for (const read of reads) assert.match(read, `WHERE id = '${context.chosen}'`, read);
});

test("a restart over the rows costs what a restart over empty tables does (printed)", async (context) => {
  const timed = async () => {
    const started = performance.now();
    await context.engine.restart();
    return Math.round(performance.now() - started);
  };
  const withRows = await timed();
  await context.db.sql("TRUNCATE ps_endpoints, ps_auths, ps_aors;");
  const empty = await timed();
  console.log(
    `\n  engine restart (stop + boot): ${withRows} ms over ${ORGS * 50} users' rows, ${empty} ms over empty tables`,
  );
  assert.equal(context.engine.problems(), [], context.engine.problems().join("\n"));
});

test.run();
