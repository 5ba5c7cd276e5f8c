// The realtime PJSIP rows' writes (PostgreSQL only; `npm run test:pg`): a save waits for their
// round trips, so an org's replacement is a fixed number of statements whatever it changes, and
// still exactly the compiler's rows, with each change queued for the engine in the same
// transaction.
import { randomUUID } from "node:crypto";
import type { KyselyPlugin } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Db } from "../../src/store/database.js";
import {
  createPjsipRealtimeRepository,
  type PjsipRow,
} from "../../src/store/pjsip-realtime-repository.js";
import { freshStore } from "./helpers.js";
import { testBackend } from "./test-database.js";

const AT = "2026-11-27T06:00:00.000Z";

/** The store with every statement counted (BEGIN and COMMIT are not statements of the repository's). */
function counted(db: Db): { db: Db; statements: () => number } {
  let statements = 0;
  const plugin: KyselyPlugin = {
    // Counted as results: compiling a query (to size it) is not a round trip.
    transformQuery: (args) => args.node,
    async transformResult(args) {
      statements++;
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin), statements: () => statements };
}

const userRows = (prefix: string, extension: string, password = "digest"): PjsipRow[] => {
  const id = `${prefix}${extension}`;
  return [
    { table: "ps_auths", id, columns: { id, auth_type: "digest", password_digest: password } },
    { table: "ps_aors", id, columns: { id, max_contacts: "1" } },
    { table: "ps_endpoints", id, columns: { id, context: `${prefix}internal`, auth: id } },
  ];
};

/** Runs `check` on a fresh store, for a new org, with a repository whose statements are counted. */
async function withFreshOrg(
  check: (org: {
    orgId: string;
    prefix: string;
    rows: ReturnType<typeof createPjsipRealtimeRepository>;
    statements: () => number;
  }) => Promise<void>,
): Promise<void> {
  const store = await freshStore();
  try {
    const orgId = randomUUID();
    const { db, statements } = counted(store.db);
    const rows = createPjsipRealtimeRepository(db);
    await check({ orgId, prefix: `org_${orgId}_`, rows, statements });
  } finally {
    await store.close();
  }
}

if (testBackend() === "postgres") {
  test("an org's rows are replaced in three statements (lock, read, write), however many change", () =>
    withFreshOrg(async ({ orgId, prefix, rows, statements }) => {
      const many = Array.from({ length: 50 }, (_, i) => userRows(prefix, String(1000 + i))).flat();
      const first = await rows.replaceOrgRows({ orgId, prefix, rows: many, at: AT });
      assert.is(first.length, 150);
      assert.is(statements(), 3);
      // One user added, one changed, one removed: still three, and nothing else touched.
      const next = [
        ...many.filter((row) => !row.id.endsWith("1049")),
        ...userRows(prefix, "2000"),
      ].map((row) =>
        row.id.endsWith("1000") && row.table === "ps_auths"
          ? { ...row, columns: { ...row.columns, password_digest: "new" } }
          : row,
      );
      const before = statements();
      const changes = await rows.replaceOrgRows({ orgId, prefix, rows: next, at: AT });
      assert.is(statements() - before, 3);
      const summary = changes.map((c) => `${c.change} ${c.table} ${c.id.slice(prefix.length)}`);
      assert.equal(summary.sort(), [
        "added ps_aors 2000",
        "added ps_auths 2000",
        "added ps_endpoints 2000",
        "changed ps_auths 1000",
        "removed ps_aors 1049",
        "removed ps_auths 1049",
        "removed ps_endpoints 1049",
      ]);
      assert.is((await rows.row("ps_auths", `${prefix}1000`))?.password_digest, "new");
      assert.is(await rows.row("ps_endpoints", `${prefix}1049`), null);
      assert.ok(await rows.row("ps_endpoints", `${prefix}2000`));
      // Unchanged: no write at all beyond the lock and the read.
      const idle = statements();
      assert.equal(await rows.replaceOrgRows({ orgId, prefix, rows: next, at: AT }), []);
      assert.is(statements() - idle, 2);
      // Every change was queued with its row, the later change of an object replacing its entry.
      const pending = await rows.pending({ orgId });
      assert.is(pending.filter((p) => p.id === `${prefix}1049`).length, 3);
      assert.is(pending.length, 150 + 3);
    }));

  test("unwrittenRows: what a replacement would change, in one query and writing nothing; another org's rows never count", () =>
    withFreshOrg(async ({ orgId, prefix, rows, statements }) => {
      const written = [...userRows(prefix, "1000"), ...userRows(prefix, "1001")];
      await rows.replaceOrgRows({ orgId, prefix, rows: written, at: AT });
      // Another org's rows: never counted as this org's.
      const otherId = randomUUID();
      const otherPrefix = `org_${otherId}_`;
      await rows.replaceOrgRows({
        orgId: otherId,
        prefix: otherPrefix,
        rows: userRows(otherPrefix, "1000"),
        at: AT,
      });
      assert.equal(await rows.unwrittenRows({ prefix, rows: written }), []);
      // 1000's password changed, 1001 deleted, 1002 added: as the compiler would give them now.
      const wanted = [...userRows(prefix, "1000", "new"), ...userRows(prefix, "1002")];
      const before = statements();
      const unwritten = await rows.unwrittenRows({ prefix, rows: wanted });
      assert.is(statements() - before, 1);
      const describe = (c: { table: string; id: string; change: string }) =>
        `${c.change} ${c.table} ${c.id.slice(prefix.length)}`;
      assert.equal(unwritten.map(describe).sort(), [
        "added ps_aors 1002",
        "added ps_auths 1002",
        "added ps_endpoints 1002",
        "changed ps_auths 1000",
        "removed ps_aors 1001",
        "removed ps_auths 1001",
        "removed ps_endpoints 1001",
      ]);
      // Nothing was written: the replacement still finds every change to make.
      const made = await rows.replaceOrgRows({ orgId, prefix, rows: wanted, at: AT });
      assert.equal(made.map(describe).sort(), unwritten.map(describe).sort());
      assert.equal(await rows.unwrittenRows({ prefix, rows: wanted }), []);
    }));

  test("an org too big for one statement's 65,535 parameters is written in a few, all of it", () =>
    withFreshOrg(async ({ orgId, prefix, rows, statements }) => {
      // 3,500 users: 28,000 row parameters and 42,000 for the owed objects.
      const many = Array.from({ length: 3500 }, (_, i) => userRows(prefix, String(10_000 + i)));
      const changes = await rows.replaceOrgRows({ orgId, prefix, rows: many.flat(), at: AT });
      assert.is(changes.length, 10_500);
      assert.ok(statements() > 3 && statements() < 10, `${statements()} statements`);
      assert.is((await rows.pending({ orgId })).length, 10_500);
      assert.ok(await rows.row("ps_endpoints", `${prefix}13499`));
      // And all removed again, just as well.
      assert.is((await rows.replaceOrgRows({ orgId, prefix, rows: [], at: AT })).length, 10_500);
      assert.is(await rows.row("ps_endpoints", `${prefix}13499`), null);
    }));

  test("a changed row is the compiler's whole object: a column it no longer sets goes back to NULL", () =>
    withFreshOrg(async ({ orgId, prefix, rows }) => {
      const id = `${prefix}1000`;
      const auth = (columns: Record<string, string>): PjsipRow[] => [
        { table: "ps_auths", id, columns: { id, ...columns } },
      ];
      await rows.replaceOrgRows({
        orgId,
        prefix,
        rows: auth({ auth_type: "digest", password: "old" }),
        at: AT,
      });
      await rows.replaceOrgRows({
        orgId,
        prefix,
        rows: auth({ auth_type: "digest", password_digest: "d" }),
        at: AT,
      });
      assert.equal(await rows.row("ps_auths", id), {
        id,
        auth_type: "digest",
        password_digest: "d",
      });
    }));

  test("acknowledging forgets the queued objects in one statement, except those changed again since", () =>
    withFreshOrg(async ({ orgId, prefix, rows, statements }) => {
      await rows.replaceOrgRows({ orgId, prefix, rows: userRows(prefix, "1000"), at: AT });
      const told = await rows.pending({ orgId });
      assert.is(told.length, 3);
      await rows.replaceOrgRows({
        orgId,
        prefix,
        rows: userRows(prefix, "1000", "changed"),
        at: AT,
      });
      const before = statements();
      await rows.acknowledge(told);
      assert.is(statements() - before, 1);
      assert.equal(
        (await rows.pending({ orgId })).map((p) => `${p.kind} ${p.id.slice(prefix.length)}`),
        ["auth 1000"],
      );
    }));
}

test.run();
