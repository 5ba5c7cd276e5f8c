// The audit log is append-only at the store (issue 16): a plain UPDATE or DELETE fails whatever
// issues it; only the retention purge, inside its own transaction and for one org, deletes. Also
// the pieces the API and CLI share: redaction, the CSV field rules and the daily scheduler.
import { sql } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorOf, csvField, recordAudit, redact } from "../../src/domain/compliance/audit-log.js";
import { setRetention } from "../../src/domain/compliance/retention.js";
import { startRetentionScheduler } from "../../src/domain/compliance/retention-scheduler.js";
import { purgeAuditBefore } from "../../src/store/audit-log-repository.js";
import { freshStore, insertOrg } from "./helpers.js";

const A = "aaaaaaaa-0000-4000-8000-00000000000a";
const B = "bbbbbbbb-0000-4000-8000-00000000000b";

async function seeded() {
  const store = await freshStore();
  await insertOrg(store.db, A, "A");
  await insertOrg(store.db, B, "B");
  for (const [org, day] of [
    [A, "2026-01-01"],
    [A, "2026-01-10"],
    [B, "2026-01-01"],
  ] as const) {
    await recordAudit(store.db, new Date(`${day}T00:00:00Z`), {
      orgId: org,
      actor: { kind: "org_key", id: null },
      requestId: "r",
      resourceType: "users",
      resourceId: "u",
      action: "create",
      operation: "POST /users",
      before: null,
      after: { name: "x", sip: { password: "p" } },
      schedulesDeploy: true,
    });
  }
  return store;
}

const count = async (db: Awaited<ReturnType<typeof freshStore>>["db"], org: string) =>
  Number(
    (
      await db
        .selectFrom("audit_log")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("org_id", "=", org)
        .executeTakeFirstOrThrow()
    ).n,
  );

test("a plain UPDATE or DELETE of the audit log fails; the store keeps every row", async () => {
  const store = await seeded();
  try {
    for (const statement of [
      sql`UPDATE audit_log SET action = 'forged'`,
      sql`DELETE FROM audit_log`,
      sql`DELETE FROM audit_log WHERE org_id = ${A}`,
    ]) {
      try {
        await statement.execute(store.db);
        assert.unreachable("the edit went through");
      } catch (error) {
        assert.match((error as Error).message, "audit_log is append-only");
      }
    }
    // Kysely's builders meet the same triggers.
    try {
      await store.db.updateTable("audit_log").set({ after: null }).execute();
      assert.unreachable("the update went through");
    } catch (error) {
      assert.match((error as Error).message, "audit_log is append-only");
    }
    assert.is(await count(store.db, A), 2);
    assert.is(await count(store.db, B), 1);
    const stored = await store.db.selectFrom("audit_log").select("after").executeTakeFirstOrThrow();
    assert.equal(JSON.parse(stored.after!), { name: "x", sip: { password: "[redacted]" } });
  } finally {
    await store.close();
  }
});

test("the purge deletes one org's rows before the cutoff, then the gate is shut again", async () => {
  const store = await seeded();
  try {
    assert.is(await purgeAuditBefore(store.db, A, "2026-01-05T00:00:00.000Z", true), 1);
    assert.is(await count(store.db, A), 2, "a dry run deletes nothing");
    assert.is(await purgeAuditBefore(store.db, A, "2026-01-05T00:00:00.000Z", false), 1);
    assert.is(await count(store.db, A), 1);
    assert.is(await count(store.db, B), 1, "B's row of the same age stays");
    const gate = await store.db.selectFrom("audit_purge_gate").selectAll().execute();
    assert.equal(gate, []);
    try {
      await sql`DELETE FROM audit_log WHERE org_id = ${A}`.execute(store.db);
      assert.unreachable("the gate stayed open");
    } catch (error) {
      assert.match((error as Error).message, "audit_log is append-only");
    }
  } finally {
    await store.close();
  }
});

test("the daily scheduler purges once per day on its clock, each org by its own policy", async () => {
  const store = await seeded();
  try {
    await setRetention(store.db, A, { audit: 5 }, new Date("2026-01-01T00:00:00Z"));
    let now = new Date("2026-01-12T00:00:00Z");
    const purged: string[] = [];
    const scheduler = startRetentionScheduler({
      context: { db: store.db, recordingsDir: "/nonexistent" },
      clock: () => now,
      timer: false,
      instruments: { purged: (kind, n) => purged.push(`${kind} ${n}`) },
    });
    const first = await scheduler.tick();
    assert.is(first!.length, 1, "only A has a policy");
    assert.is(first![0]!.kinds.audit.deleted, 1);
    assert.is(await count(store.db, B), 1, "B untouched");
    assert.equal(purged, ["audit 1"], "the purge is counted by kind (pbx_retention_purged_total)");
    now = new Date("2026-01-12T23:00:00Z");
    assert.is(await scheduler.tick(), null, "not a day yet");
    now = new Date("2026-01-16T00:00:00Z");
    const later = await scheduler.tick();
    assert.is(
      later![0]!.kinds.audit.deleted,
      1,
      "the 01-10 record; the first purge's own is newer",
    );
    const purges = await store.db
      .selectFrom("audit_log")
      .select(["actor_kind", "action"])
      .where("org_id", "=", A)
      .execute();
    assert.equal(purges, [
      { actor_kind: "system", action: "purge" },
      { actor_kind: "system", action: "purge" },
    ]);
    await scheduler.stop();
  } finally {
    await store.close();
  }
});

test("the actor of each credential", () => {
  const org = { kind: "org" as const, orgId: A, permissions: "all" as const };
  assert.equal(actorOf({ ...org, via: "api_key", apiKeyId: "k1", permissions: new Set() }), {
    kind: "api_key",
    id: "k1",
  });
  assert.equal(actorOf({ ...org, via: "user_jwt", userId: "u1", role: "owner" }), {
    kind: "user",
    id: "u1",
  });
  assert.equal(actorOf({ ...org, via: "org_key" }), { kind: "org_key", id: null });
  assert.equal(actorOf({ ...org, via: "org_jwt" }), { kind: "org_jwt", id: null });
  assert.equal(actorOf({ ...org, via: "internal" }), { kind: "internal", id: null });
  assert.equal(actorOf({ kind: "internal" }), { kind: "internal", id: null });
  assert.equal(actorOf({ kind: "admin", username: "root" }), { kind: "admin", id: "root" });
});

test("redaction and CSV fields", () => {
  assert.equal(
    redact({ api_key: "org_x", nested: [{ webhook_secret: "s", url: "u" }], md5_cred: "m", n: 1 }),
    {
      api_key: "[redacted]",
      nested: [{ webhook_secret: "[redacted]", url: "u" }],
      md5_cred: "[redacted]",
      n: 1,
    },
  );
  assert.is(csvField("plain"), "plain");
  assert.is(csvField('a,"b"'), '"a,""b"""');
  assert.is(csvField("line\nbreak"), '"line\nbreak"');
  assert.is(csvField("=HYPERLINK(1)"), "'=HYPERLINK(1)");
  assert.is(csvField(null), "");
  assert.is(csvField({ a: 1 }), '"{""a"":1}"');
});

test.run();
