// Org slugs (issue 19, defect 8): every org has a unique slug, made from its name unless set,
// settable later; `pbxctl export` names the file and the trunk variables after it; orgs made
// before slugs existed get one from migration 1901.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Migrator } from "kysely";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { exportOrg } from "../../src/domain/config/export.js";
import { slugFromName } from "../../src/domain/orgs/org-slugs.js";
import { openSqlite } from "../../src/store/database.js";
import { migrations } from "../../src/store/migrations/index.js";
import { createTrunkRepository } from "../../src/store/trunk-repository.js";
import { bearer, expectError, startTestApp, type TestApp } from "./helpers.js";

let app: TestApp;
let admin: Record<string, string>;

test.before(async () => {
  app = await startTestApp();
  admin = bearer(await app.adminToken());
});
test.after(async () => app.close());

const create = (body: Record<string, unknown>) =>
  app.request("POST", "/api/v1/organizations", { headers: admin, body });

test("a slug is made from the name, unique with -2, -3; accents and punctuation fold", async () => {
  assert.is(slugFromName("Café Trading Co."), "cafe-trading-co");
  assert.is(slugFromName("!!!"), "org");
  const first = await create({ name: "Acme Trading Co." });
  assert.is(first.status, 201, first.text);
  assert.is(first.body.slug, "acme-trading-co");
  const second = await create({ name: "ACME trading co" });
  assert.is(second.body.slug, "acme-trading-co-2");
});

test("a slug can be given and changed; a taken or malformed one is refused in words", async () => {
  const chosen = await create({ name: "Globex Corporation", slug: "globex" });
  assert.is(chosen.status, 201, chosen.text);
  assert.is(chosen.body.slug, "globex");
  expectError(
    await create({ name: "Other", slug: "globex" }),
    409,
    "Slug globex is already used by another organization",
  );
  const other = await create({ name: "Initech" });
  const own = { "x-api-key": other.body.api_key };
  const renamed = await app.request("PUT", `/api/v1/organizations/${other.body.id}`, {
    headers: own,
    body: { slug: "initech-hq" },
  });
  assert.is(renamed.status, 200, renamed.text);
  assert.is(renamed.body.slug, "initech-hq");
  expectError(
    await app.request("PUT", `/api/v1/organizations/${other.body.id}`, {
      headers: own,
      body: { slug: "globex" },
    }),
    409,
    "Slug globex is already used by another organization",
  );
  const bad = await app.request("PUT", `/api/v1/organizations/${other.body.id}`, {
    headers: own,
    body: { slug: "Not A Slug" },
  });
  assert.is(bad.status, 400);
  assert.match(bad.body.error, "lowercase letters, digits and -");
});

test("export of an API-created org is <slug>.yaml, with trunk variables named after the slug", async () => {
  const org = await create({ name: "Umbrella Labs" });
  await createTrunkRepository(app.db).insert(org.body.id, {
    name: "carrier",
    host: "sip.example.net",
    port: 5060,
    transport: "udp",
    username: "u",
    password: "in-store-secret",
    registration: false,
    codecs: ["ulaw"],
    match: [],
  });
  const exported = await exportOrg(app.db, "umbrella-labs");
  assert.is(exported.fileName, "umbrella-labs.yaml");
  assert.match(exported.yaml, "slug: umbrella-labs");
  assert.match(exported.yaml, "password_env: PBX_TRUNK_UMBRELLA_LABS_CARRIER_PASSWORD");
  assert.not.match(exported.yaml, `PBX_TRUNK_${org.body.id.slice(0, 8).toUpperCase()}_`);
});

test("migration 1901 gives orgs made without a slug one from their name", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-slugs-"));
  const db = openSqlite(join(dir, "pbx.db"));
  try {
    const provider = { getMigrations: async () => Object.fromEntries(migrations) };
    const migrator = new Migrator({ db, provider });
    const before = await migrator.migrateTo("0701-webhooks");
    assert.not.ok(before.error);
    const row = (id: string, name: string, slug: string | null) => ({
      id,
      name,
      slug,
      type: "production",
      status: "active",
      context_prefix: `org_${id}_`,
      recording_enabled: 1,
      max_concurrent_calls: 0,
      api_key_digest: `digest-${id}`,
      api_key_encrypted: "x",
      api_secret_hash: "x",
      request_status: null,
      requested_by_email: null,
      decided_at: null,
      created_at: `2026-01-0${id.slice(-1)}T00:00:00Z`,
      updated_at: "2026-01-01T00:00:00Z",
    });
    await db
      .insertInto("organizations")
      .values([
        row("00000000-0000-4000-8000-000000000001", "Acme", "acme"),
        row("00000000-0000-4000-8000-000000000002", "Acme", null),
        row("00000000-0000-4000-8000-000000000003", "Hooli Inc", null),
      ])
      .execute();
    const after = await migrator.migrateToLatest();
    assert.not.ok(after.error);
    const slugs = await db.selectFrom("organizations").select(["slug"]).orderBy("id").execute();
    assert.equal(
      slugs.map((s) => s.slug),
      ["acme", "acme-2", "hooli-inc"],
    );
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
