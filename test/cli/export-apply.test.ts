// GitOps against the store: export -> apply -> export is byte-identical, apply reconciles (with
// --prune, --dry-run, all or nothing per org), creates orgs, deploys, and --changed-since.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parse, stringify } from "yaml";
import Apply from "../../src/cli/commands/apply.js";
import Export from "../../src/cli/commands/export.js";
import Status, { type StatusCommandResult } from "../../src/cli/commands/status.js";
import { openDataStore } from "../../src/domain/config/gitops.js";
import { loadOrgPaths } from "../../src/model/files.js";
import { sipDigest } from "../../src/model/secrets.js";
import { createDidRepository } from "../../src/store/did-repository.js";
import { createIvrRepository } from "../../src/store/ivr-repository.js";
import { createOrgUserRepository } from "../../src/store/org-user-repository.js";
import { createOutboundRouteRepository } from "../../src/store/outbound-route-repository.js";
import { createQueueRepository } from "../../src/store/queue-repository.js";
import { createTimeConditionRepository } from "../../src/store/time-condition-repository.js";
import { createTrunkRepository } from "../../src/store/trunk-repository.js";
import { createUserRepository } from "../../src/store/user-repository.js";
import { createWebhookRepository } from "../../src/store/webhook-repository.js";
import { insertOrg } from "../store/helpers.js";
import { runCommand, withEnv } from "./run-command.js";
import { storePerTest } from "./test-store.js";

const ORG = "4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d";
const PREFIX = `org_${ORG}_`;
const TRUNK_ENV = "PBX_TRUNK_ACME_CARRIER_PASSWORD";

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
    sip: { md5_cred: sipDigest(`${PREFIX}${extension}`, `pw${extension}`) },
  };
}

/** A data dir whose store holds org "acme", written through the repositories like the API does. */
async function seededDataDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "pbx-gitops-"));
  const store = await openDataStore(process.env, dir, { create: true });
  const db = store.db;
  await insertOrg(db, ORG, "Acme Corp");
  await db.updateTable("organizations").set({ slug: "acme" }).where("id", "=", ORG).execute();
  await createUserRepository(db).insert(ORG, user("1001", "Alice"));
  await createUserRepository(db).insert(ORG, user("1002", "Bob"));
  await createUserRepository(db).insert(ORG, user("1003", "Carol"));
  await createQueueRepository(db).insert(ORG, {
    number: "2000",
    name: "Sales",
    strategy: "ringall",
    moh: "default",
    max_wait: 120,
    timeout_destination_type: "user",
    timeout_destination: "1001",
    members: [
      { extension: "1001", penalty: 0, ring_time: 20 },
      { extension: "1002", penalty: 1, ring_time: 20 },
    ],
  });
  await createIvrRepository(db).insert(ORG, {
    name: "Main menu",
    extension: "3000",
    description: "",
    timeout: 10,
    max_retries: 3,
    status: "active",
    greeting_language: "en-IN",
    greeting_voice: "en-IN-Wavenet-D",
    greeting_prompt: null,
    direct_extension_dial: false,
    options: [
      { digit: "1", action_type: "queue", action_destination: null, description: "Sales" },
      { digit: "*", action_type: "hangup", action_destination: null, description: "" },
    ],
  });
  const [queue] = await createQueueRepository(db).listByOrg(ORG);
  await db
    .updateTable("ivr_options")
    .set({ action_destination: queue!.id! })
    .where("digit", "=", "1")
    .execute();
  await createDidRepository(db).insert(ORG, {
    number: "+918065978001",
    status: "active",
    pool_status: "assigned",
    is_default: true,
    routing_type: "queue",
    routing_destination: "2000",
    routing_environment: "prod",
  });
  await createTrunkRepository(db).insert(ORG, {
    name: "carrier",
    host: "sip.example.net",
    port: 5060,
    transport: "udp",
    username: "acme",
    password: "s3cret-in-store",
    registration: true,
    codecs: ["ulaw", "alaw"],
    match: [],
  });
  await createOutboundRouteRepository(db).insert(ORG, {
    name: "India",
    patterns: ["_0X."],
    trunk: "carrier",
    strip_digits: 1,
    prepend_digits: "91",
    caller_id_override: null,
  });
  await createTimeConditionRepository(db).insert(ORG, {
    name: "office-hours",
    description: "",
    time_zone: "Europe/London",
    ranges: [{ days: ["mon", "tue", "wed", "thu", "fri"], start: "09:00", end: "17:30" }],
    exceptions: [
      {
        name: "Christmas",
        start_date: "2026-12-24",
        end_date: "2026-12-26",
        destination_type: null,
        destination: null,
      },
    ],
    open_destination_type: "queue",
    open_destination: "2000",
    closed_destination_type: "voicemail",
    closed_destination: "1001",
  });
  await db.destroy();
  return dir;
}

async function exportText(dataDir: string): Promise<string> {
  const out = await runCommand(Export, ["--org", "acme", "--out", "-", "--data-dir", dataDir]);
  assert.is(out.code, 0, out.stderr + String(out.error));
  return out.stdout;
}

async function apply(dataDir: string, args: string[]) {
  return runCommand(Apply, [...args, "--data-dir", dataDir, "--json"]);
}

storePerTest(test);

test("export writes no plaintext secret, validates, and export -> apply -> export is byte-identical", async () => {
  const dataDir = await seededDataDir();
  try {
    const first = await exportText(dataDir);
    assert.not.match(first, /s3cret-in-store/);
    assert.match(first, new RegExp(`password_env: ${TRUNK_ENV}`));
    assert.match(first, /md5_cred: [0-9a-f]{32}/);
    assert.match(first, /time_conditions:\n {2}- id: [0-9a-f-]{36}\n {4}name: office-hours\n/);
    assert.match(first, /time_zone: Europe\/London/);

    const file = join(dataDir, "acme.yaml");
    writeFileSync(file, first);
    const loaded = await loadOrgPaths([file], { [TRUNK_ENV]: "s3cret-in-store" });
    assert.equal(
      loaded.diagnostics.filter((d) => d.severity === "error"),
      [],
      "validate accepts the export",
    );

    await withEnv({ [TRUNK_ENV]: "s3cret-in-store" }, async () => {
      const applied = await apply(dataDir, [file]);
      assert.is(applied.code, 0, applied.stderr + String(applied.error));
      // An untouched export changes nothing: the trunk's derived password_env means "the
      // stored password" (issue 19, defect 10).
      assert.equal(applied.result!.orgs[0]!.changes, [], "export -> apply is a no-op");
      assert.is(await exportText(dataDir), first, "round trip is byte-identical");

      const again = await apply(dataDir, [file]);
      assert.equal(again.result!.orgs[0]!.changes, [], "an unchanged file changes nothing");
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("apply --dry-run shows the changes and writes nothing; apply --prune deletes what the file dropped", async () => {
  const dataDir = await seededDataDir();
  try {
    const file = join(dataDir, "acme.yaml");
    const original = await exportText(dataDir);
    const data = parse(original);
    data.users = data.users.filter((u: { extension: string }) => u.extension !== "1003");
    data.users.push({ extension: "1004", name: "Dan", sip: { md5_cred: "0".repeat(32) } });
    data.queues[0].strategy = "leastrecent";
    writeFileSync(file, stringify(data));

    await withEnv({ [TRUNK_ENV]: "s3cret-in-store" }, async () => {
      const dry = await runCommand(Apply, [file, "--dry-run", "--data-dir", dataDir]);
      assert.is(dry.code, 0, dry.stderr + String(dry.error));
      assert.match(dry.stdout, /\+ user 1004 \(create\)/);
      assert.match(dry.stdout, /~ queue 2000 \(update\)/);
      assert.match(dry.stdout, /~ queue \S+ \(2000\): strategy ringall → leastrecent/);
      assert.match(dry.stdout, /kept \(not in the file; --prune deletes them\): user 1003/);
      assert.match(dry.stdout, /dry run: nothing was written/);
      assert.is(await exportText(dataDir), original, "a dry run changes nothing");

      const kept = await apply(dataDir, [file, "--no-deploy"]);
      assert.is(kept.code, 0);
      assert.match(await exportText(dataDir), /extension: "1003"/, "without --prune 1003 stays");

      const pruned = await apply(dataDir, [file, "--prune", "--no-deploy"]);
      assert.is(pruned.code, 0, pruned.stderr);
      assert.equal(pruned.result!.orgs[0]!.changes, [
        { kind: "user", action: "delete", key: "1003" },
      ]);
      const after = await exportText(dataDir);
      assert.not.match(after, /extension: "1003"/);
      assert.match(after, /extension: "1004"/);
      assert.match(after, /strategy: leastrecent/);
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("apply is all or nothing per org: a collision with a kept resource writes nothing", async () => {
  const dataDir = await seededDataDir();
  try {
    const file = join(dataDir, "acme.yaml");
    const original = await exportText(dataDir);
    const data = parse(original);
    // The file drops user 1003 (kept without --prune) and gives its extension to a new IVR.
    data.users = data.users.filter((u: { extension: string }) => u.extension !== "1003");
    data.ivrs.push({ name: "Night", extension: "1003" });
    data.queues[0].name = "Sales team";
    writeFileSync(file, stringify(data));
    await withEnv({ [TRUNK_ENV]: "s3cret-in-store" }, async () => {
      const out = await apply(dataDir, [file]);
      assert.is(out.code, 1);
      assert.match(out.result?.failures[0]?.error ?? out.stdout, /Extension 1003/);
    });
    assert.is(await exportText(dataDir), original, "nothing of the org was written");
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("apply refuses a trunk matching another org's carrier address (409), writing nothing", async () => {
  const dataDir = await seededDataDir();
  try {
    const other = "7a1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d";
    const store = await openDataStore(process.env, dataDir, { create: false });
    await insertOrg(store.db, other, "Other Corp");
    await createTrunkRepository(store.db).insert(other, {
      name: "theirs",
      host: "198.51.100.20",
      port: 5060,
      transport: "udp",
      username: null,
      registration: false,
      codecs: ["ulaw"],
      match: ["192.0.2.0/24"],
    });
    await store.db.destroy();
    const file = join(dataDir, "acme.yaml");
    const original = await exportText(dataDir);
    const data = parse(original);
    data.trunks[0].match = ["192.0.2.77"];
    writeFileSync(file, stringify(data));
    await withEnv({ [TRUNK_ENV]: "s3cret-in-store" }, async () => {
      const out = await apply(dataDir, [file]);
      assert.is(out.code, 1);
      assert.match(
        out.result?.failures[0]?.error ?? out.stdout,
        "trunks[0]: 192.0.2.77 is already matched by another organization's trunk",
      );
      assert.not.match(out.result?.failures[0]?.error ?? out.stdout, "Other Corp");
    });
    assert.is(await exportText(dataDir), original, "nothing of the org was written");
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("an org only in YAML is created active with its id and deployed into the engine directory", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-gitops-"));
  try {
    const file = join(dataDir, "globex.yaml");
    const id = "9b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e5f";
    writeFileSync(
      file,
      stringify({
        org: { id, name: "Globex", slug: "globex", context_prefix: "globex_" },
        users: [{ extension: "100", name: "Hank", sip: { md5_cred: "a".repeat(32) } }],
      }),
    );
    const out = await apply(dataDir, [file]);
    assert.is(out.code, 0, out.stderr + String(out.error));
    assert.is(out.result!.orgs[0]!.created, true);
    assert.is(out.result!.orgs[0]!.deploy?.result, "ok");
    const engine = join(dataDir, "asterisk");
    assert.ok(existsSync(join(engine, "orgs/globex_/pjsip.conf")));
    assert.match(readFileSync(join(engine, "pjsip.conf"), "utf8"), /orgs\/globex_\/pjsip.conf/);

    const store = await openDataStore(process.env, dataDir, { create: false });
    const row = await store.db
      .selectFrom("organizations")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    await store.db.destroy();
    assert.is(row?.status, "active");
    assert.is(row?.context_prefix, "globex_");
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("status reads the store: saved but not deployed is PENDING; after apply it is live", async () => {
  const dataDir = await seededDataDir();
  const statusOf = async (code: number) => {
    const out = await runCommand(Status, ["--data-dir", dataDir, "--json"]);
    assert.is(out.code, code, out.stderr + String(out.error));
    const result = JSON.parse(out.stdout) as StatusCommandResult;
    assert.is(result.source, "store");
    return result.units.find((u) => u.unit === `org:${PREFIX}`);
  };
  try {
    const before = await statusOf(3); // PENDING
    assert.ok(before, "the org is a unit");
    assert.is(before.appliedRevision, null);
    assert.type(before.desiredRevision, "string");
    assert.is(before.pending, true, "saved but not live");

    const yaml = join(dataDir, "acme.yaml");
    writeFileSync(yaml, await exportText(dataDir));
    await withEnv({ [TRUNK_ENV]: "s3cret-in-store" }, async () => {
      const out = await apply(dataDir, [yaml]);
      assert.is(out.code, 0, out.stderr + String(out.error));
    });
    const after = await statusOf(0); // OK
    assert.is(after?.pending, false);
    assert.is(after?.appliedRevision, before.desiredRevision, "what was saved is what is live");
    const text = await runCommand(Status, ["--data-dir", dataDir]);
    assert.not.match(text.stdout, /PENDING/, text.stdout);
    assert.match(
      text.stdout,
      /^org:\S+\s+acme\s+[0-9a-f]{12}\s/m,
      "the org's slug, then the applied column shows a revision",
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("apply takes a pool DID for the org and, with --prune, releases a dropped one to the pool", async () => {
  const dataDir = await seededDataDir();
  try {
    let store = await openDataStore(process.env, dataDir, { create: false });
    await createDidRepository(store.db).insert(null, {
      number: "+918065978005",
      status: "active",
      pool_status: "available",
      is_default: false,
      routing_type: null,
      routing_destination: null,
      routing_environment: "prod",
    });
    await store.db.destroy();

    const data = parse(await exportText(dataDir));
    // Replace the org's DID by the pool one, which becomes the default caller ID.
    data.dids = [
      {
        number: "+918065978005",
        is_default: true,
        routing_type: "queue",
        routing_destination: "2000",
      },
    ];
    const file = join(dataDir, "acme.yaml");
    writeFileSync(file, stringify(data));
    await withEnv({ [TRUNK_ENV]: "s3cret-in-store" }, async () => {
      const out = await apply(dataDir, [file, "--prune"]);
      assert.is(out.code, 0, out.stdout + out.stderr + String(out.error));
      const changes = out.result!.orgs[0]!.changes.filter(
        (c: { kind: string }) => c.kind === "did",
      );
      assert.equal(changes, [
        { kind: "did", action: "assign", key: "+918065978005" },
        { kind: "did", action: "release", key: "+918065978001" },
      ]);
      assert.is(out.result!.orgs[0]!.didsChanged, true);
      assert.ok(out.result!.gateway, "the gateway was regenerated");
    });
    store = await openDataStore(process.env, dataDir, { create: false });
    const rows = await store.db.selectFrom("dids").selectAll().orderBy("number").execute();
    await store.db.destroy();
    assert.equal(
      rows.map((r) => [r.number, r.org_id, r.pool_status, r.is_default]),
      [
        ["+918065978001", null, "available", 0],
        ["+918065978005", ORG, "assigned", 1],
      ],
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("apply --changed-since applies only the org files changed since that revision", async () => {
  const repo = mkdtempSync(join(tmpdir(), "pbx-gitops-repo-"));
  const cwd = process.cwd();
  try {
    const git = (...args: string[]) =>
      execFileSync("git", args, {
        cwd: repo,
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@example.test",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@example.test",
        },
      });
    mkdirSync(join(repo, "orgs"));
    const org = (id: string, slug: string) =>
      stringify({ org: { id, name: slug, slug }, users: [] });
    writeFileSync(join(repo, "orgs/a.yaml"), org("11111111-1111-4111-8111-111111111111", "a"));
    writeFileSync(join(repo, "orgs/b.yaml"), org("22222222-2222-4222-8222-222222222222", "b"));
    git("init", "-q");
    git("add", ".");
    git("commit", "-qm", "orgs");
    writeFileSync(join(repo, "orgs/b.yaml"), org("22222222-2222-4222-8222-222222222222", "b2"));
    process.chdir(repo);
    const out = await apply(join(repo, "data"), ["orgs", "--changed-since", "HEAD", "--no-deploy"]);
    assert.is(out.code, 0, out.stderr + String(out.error));
    assert.equal(out.result!.files, ["orgs/b.yaml"]);
    assert.equal(
      out.result!.orgs.map((o: { name: string }) => o.name),
      ["b2"],
    );
  } finally {
    process.chdir(cwd);
    rmSync(repo, { recursive: true, force: true });
  }
});

test("export writes webhooks (no secret) and platform users with roles; apply reconciles them", async () => {
  const dataDir = await seededDataDir();
  try {
    let store = await openDataStore(process.env, dataDir, { create: false });
    const now = "2026-03-01T00:00:00.000Z";
    await createWebhookRepository(store.db).insert({
      id: "33333333-3333-4333-8333-333333333333",
      org_id: ORG,
      url: "https://hooks.example.com/pbx",
      events: JSON.stringify(["call.ended"]),
      secret: "sealed-secret-never-exported",
      active: 1,
      retry_count: 3,
      timeout_ms: 4000,
      last_delivery: null,
      last_status: null,
      last_error: null,
      failure_count: 0,
      failed_deliveries_in_row: 0,
      deactivated_reason: null,
      created_at: now,
      updated_at: now,
    });
    await createOrgUserRepository(store.db).insert({
      id: "44444444-4444-4444-8444-444444444444",
      org_id: ORG,
      email: "owner@acme.example",
      subject: "idp|owner",
      name: "Olive Owner",
      role: "owner",
      status: "active",
      created_at: now,
      updated_at: now,
    });
    await store.db.destroy();

    const text = await exportText(dataDir);
    assert.match(text, "url: https://hooks.example.com/pbx");
    assert.match(text, "retry_count: 3");
    assert.match(text, "email: owner@acme.example");
    assert.match(text, "role: owner");
    assert.not.match(text, "sealed-secret-never-exported");
    assert.not.match(text, "secret:");
    assert.not.match(text, "idp|owner", "the identity provider's subject is not configuration");
    assert.match(text, "Not exported: API keys");

    const file = join(dataDir, "acme.yaml");
    const data = parse(text);
    writeFileSync(file, text);
    await withEnv({ [TRUNK_ENV]: "s3cret-in-store" }, async () => {
      const unchanged = await apply(dataDir, [file, "--no-deploy"]);
      assert.is(unchanged.code, 0, unchanged.stderr + String(unchanged.error));
      assert.equal(unchanged.result!.orgs[0]!.changes, [], "export -> apply is a no-op");

      data.webhooks[0].events = ["call.ended", "call.answered"];
      data.org_users.push({ email: "Viewer@Acme.example", name: null, role: "viewer" });
      writeFileSync(file, stringify(data));
      const changed = await apply(dataDir, [file, "--no-deploy"]);
      assert.is(changed.code, 0, changed.stderr + String(changed.error));
      assert.equal(changed.result!.orgs[0]!.changes, [
        { kind: "webhook", action: "update", key: "https://hooks.example.com/pbx" },
        { kind: "org_user", action: "create", key: "viewer@acme.example" },
      ]);
      const again = await exportText(dataDir);
      assert.match(again, "- call.answered");
      assert.match(again, "email: viewer@acme.example\n    name: null\n    role: viewer");

      data.webhooks[0].events = ["call.exploded"];
      writeFileSync(file, stringify(data));
      const refused = await apply(dataDir, [file, "--no-deploy"]);
      assert.is(refused.code, 1);
      assert.match(
        JSON.parse(refused.stdout).failures[0].error,
        "webhooks[0]: Unknown event type: call.exploded",
      );

      data.webhooks[0].events = ["call.ended"];
      data.webhooks[0].retry_count = 11;
      writeFileSync(file, stringify(data));
      const outOfBounds = await apply(dataDir, [file, "--no-deploy"]);
      assert.is(outOfBounds.code, 1);
      assert.match(
        JSON.parse(outOfBounds.stdout).failures[0].error,
        "webhooks[0]: retry_count must be an integer from 0 to 10",
        "the API's bound, in the API's words",
      );
    });
    store = await openDataStore(process.env, dataDir, { create: false });
    const hooks = await createWebhookRepository(store.db).listByOrg(ORG);
    assert.is(hooks[0]!.secret, "sealed-secret-never-exported", "apply keeps the stored secret");
    await store.db.destroy();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("export -> apply --dry-run of a private webhook address honours PBX_WEBHOOK_ALLOW_PRIVATE as the server does", async () => {
  const dataDir = await seededDataDir();
  try {
    const store = await openDataStore(process.env, dataDir, { create: false });
    const now = "2026-03-01T00:00:00.000Z";
    await createWebhookRepository(store.db).insert({
      id: "55555555-5555-4555-8555-555555555555",
      org_id: ORG,
      url: "http://127.0.0.1:9000/pbx",
      events: JSON.stringify(["call.ended"]),
      secret: null,
      active: 1,
      retry_count: 3,
      timeout_ms: 4000,
      last_delivery: null,
      last_status: null,
      last_error: null,
      failure_count: 0,
      failed_deliveries_in_row: 0,
      deactivated_reason: null,
      created_at: now,
      updated_at: now,
    });
    await store.db.destroy();
    const file = join(dataDir, "acme.yaml");
    writeFileSync(file, await exportText(dataDir));

    await withEnv({ [TRUNK_ENV]: "s3cret-in-store", PBX_WEBHOOK_ALLOW_PRIVATE: "1" }, async () => {
      const allowed = await apply(dataDir, [file, "--dry-run"]);
      assert.is(allowed.code, 0, allowed.stderr + String(allowed.error));
      assert.equal(allowed.result!.orgs[0]!.changes, [], "export -> apply is a no-op");
    });
    await withEnv({ [TRUNK_ENV]: "s3cret-in-store", PBX_WEBHOOK_ALLOW_PRIVATE: "" }, async () => {
      const refused = await apply(dataDir, [file, "--dry-run"]);
      assert.is(refused.code, 1);
      assert.match(
        JSON.parse(refused.stdout).failures[0].error,
        "webhooks[0]: url must not point to a loopback",
      );
      assert.match(JSON.parse(refused.stdout).failures[0].error, "PBX_WEBHOOK_ALLOW_PRIVATE=1");
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("apply updates every kind of resource of an existing org, rebuilds claims, and --prune removes them", async () => {
  const dataDir = await seededDataDir();
  try {
    const file = join(dataDir, "acme.yaml");
    const data = parse(await exportText(dataDir));
    const byExt = (list: { extension: string; name: string; ring_time: number }[], ext: string) =>
      list.find((x) => x.extension === ext)!;
    byExt(data.users, "1001").name = "Alicia";
    byExt(data.users, "1002").ring_time = 45;
    data.queues[0].members = [{ extension: "1003", penalty: 2, ring_time: 15 }];
    data.ivrs[0].timeout = 7;
    data.ivrs[0].options = [
      { digit: "2", action_type: "extension", action_destination: "1002", description: "Bob" },
    ];
    data.trunks[0].host = "sip2.example.net";
    // A new route placed first: the stored route moves to position 1.
    data.outbound_routes[0].patterns = ["_0XX."];
    data.outbound_routes.unshift({ name: "Emergency", patterns: ["112"], trunk: "carrier" });
    data.dids[0].routing_type = "ivr";
    data.dids[0].routing_destination = data.ivrs[0].id;
    data.time_conditions[0].ranges[0].end = "18:00";
    data.time_conditions.push({
      name: "weekend",
      time_zone: "Asia/Kolkata",
      ranges: [{ days: ["sat", "sun"], start: "10:00", end: "14:00" }],
      open_destination_type: "extension",
      open_destination: "1003",
      closed_destination_type: "hangup",
    });
    writeFileSync(file, stringify(data));

    await withEnv({ [TRUNK_ENV]: "s3cret-in-store" }, async () => {
      const out = await apply(dataDir, [file, "--no-deploy"]);
      assert.is(out.code, 0, out.stdout + out.stderr + String(out.error));
      const changes = out.result!.orgs[0]!.changes.map(
        (c: { kind: string; action: string; key: string }) => `${c.action} ${c.kind} ${c.key}`,
      );
      assert.equal(changes.sort(), [
        "create outbound_route Emergency",
        "create time_condition weekend",
        "update did +918065978001",
        "update ivr 3000",
        "update outbound_route India",
        "update queue 2000",
        "update time_condition office-hours",
        "update trunk carrier",
        "update user 1001",
        "update user 1002",
      ]);
    });

    let store = await openDataStore(process.env, dataDir, { create: false });
    let db = store.db;
    const users = await createUserRepository(db).listByOrg(ORG);
    assert.equal(
      users.map((u) => [u.extension, u.name, u.ring_time]),
      [
        ["1001", "Alicia", 30],
        ["1002", "Bob", 45],
        ["1003", "Carol", 30],
      ],
    );
    const [queue] = await createQueueRepository(db).listByOrg(ORG);
    assert.equal(queue!.members, [{ extension: "1003", penalty: 2, ring_time: 15 }]);
    const [ivr] = await createIvrRepository(db).listByOrg(ORG);
    assert.is(ivr!.timeout, 7);
    assert.equal(
      ivr!.options.map((o) => [o.digit, o.action_type, o.action_destination]),
      [["2", "extension", "1002"]],
    );
    const [trunk] = await createTrunkRepository(db).listByOrg(ORG);
    assert.is(trunk!.host, "sip2.example.net");
    assert.is(trunk!.password, "s3cret-in-store", "the stored password is kept");
    const routes = await createOutboundRouteRepository(db).listByOrg(ORG);
    assert.equal(
      routes.map((r) => [r.name, r.patterns]),
      [
        ["Emergency", ["112"]],
        ["India", ["_0XX."]],
      ],
      "routes in the file's order",
    );
    const [did] = await createDidRepository(db).listByOrg(ORG);
    assert.equal([did!.routing_type, did!.routing_destination], ["ivr", ivr!.id]);
    const schedules = await createTimeConditionRepository(db).listByOrg(ORG);
    assert.equal(
      schedules.map((t) => [t.name, t.ranges[0]!.end]),
      [
        ["office-hours", "18:00"],
        ["weekend", "14:00"],
      ],
    );
    const claims = await db
      .selectFrom("extension_claims")
      .select(["extension", "owner_type"])
      .where("org_id", "=", ORG)
      .orderBy("extension")
      .execute();
    assert.equal(
      claims.map((c) => `${c.extension} ${c.owner_type}`),
      ["1001 user", "1002 user", "1003 user", "2000 queue", "3000 ivr"],
      "every extension of the final state is claimed once",
    );
    await db.destroy();

    // The file keeps only the users: --prune removes the queue, IVR, routes, trunk; the DID
    // goes back to the pool.
    const slim = parse(await exportText(dataDir));
    slim.queues = [];
    slim.ivrs = [];
    slim.outbound_routes = [];
    slim.trunks = [];
    slim.dids = [];
    slim.time_conditions = [];
    writeFileSync(file, stringify(slim));
    const out = await apply(dataDir, [file, "--prune", "--no-deploy"]);
    assert.is(out.code, 0, out.stdout + out.stderr + String(out.error));
    const removed = out.result!.orgs[0]!.changes.map(
      (c: { kind: string; action: string; key: string }) => `${c.action} ${c.kind} ${c.key}`,
    );
    assert.equal(removed.sort(), [
      "delete ivr 3000",
      "delete outbound_route Emergency",
      "delete outbound_route India",
      "delete queue 2000",
      "delete time_condition office-hours",
      "delete time_condition weekend",
      "delete trunk carrier",
      "release did +918065978001",
    ]);
    store = await openDataStore(process.env, dataDir, { create: false });
    db = store.db;
    assert.equal(await createQueueRepository(db).listByOrg(ORG), []);
    assert.equal(await createIvrRepository(db).listByOrg(ORG), []);
    assert.equal(await createOutboundRouteRepository(db).listByOrg(ORG), []);
    assert.equal(await createTrunkRepository(db).listByOrg(ORG), []);
    assert.equal(await createDidRepository(db).listByOrg(ORG), []);
    assert.equal(await createTimeConditionRepository(db).listByOrg(ORG), []);
    const pool = await createDidRepository(db).listUnassigned();
    assert.equal(
      pool.map((d) => [d.number, d.pool_status]),
      [["+918065978001", "available"]],
    );
    const left = await db
      .selectFrom("extension_claims")
      .select("extension")
      .where("org_id", "=", ORG)
      .orderBy("extension")
      .execute();
    assert.equal(
      left.map((c) => c.extension),
      ["1001", "1002", "1003"],
      "removed resources release their extensions",
    );
    await db.destroy();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
