// `pbxctl apply` writes the audit log (issue 16): one record per org it changed, actor `cli`, the
// org's exported state before and after (secrets redacted), and the deploy it led to; a dry run
// or an unchanged file writes none.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parse, stringify } from "yaml";
import Apply from "../../src/cli/commands/apply.js";
import Export from "../../src/cli/commands/export.js";
import { listAudit } from "../../src/domain/compliance/audit-log.js";
import { openDataStore } from "../../src/domain/config/gitops.js";
import { sipDigest } from "../../src/model/secrets.js";
import { createUserRepository } from "../../src/store/user-repository.js";
import { breakAuditInserts, insertOrg } from "../store/helpers.js";
import { runCommand } from "./run-command.js";
import { storePerTest } from "./test-store.js";

const ORG = "5a1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3e";
const PREFIX = `org_${ORG}_`;

/** A data dir with org "audit" (user 1001 Alice) and its exported file, Alice renamed. */
async function changedOrgFile(): Promise<{ dataDir: string; file: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-apply-audit-"));
  const seed = await openDataStore(process.env, dataDir, { create: true });
  await insertOrg(seed.db, ORG, "Audit Corp");
  await seed.db.updateTable("organizations").set({ slug: "audit" }).where("id", "=", ORG).execute();
  await createUserRepository(seed.db).insert(ORG, {
    extension: "1001",
    name: "Alice",
    routing_type: "human",
    status: "active",
    ring_target: "ext",
    phone_number: null,
    ring_time: 30,
    outbound_did: null,
    call_recording: true,
    sip: { md5_cred: sipDigest(`${PREFIX}1001`, "pw1001") },
  });
  await seed.db.destroy();
  const exported = await runCommand(Export, [
    "--org",
    "audit",
    "--out",
    "-",
    "--data-dir",
    dataDir,
  ]);
  assert.is(exported.code, 0, exported.stderr);
  const file = join(dataDir, "audit.yaml");
  const data = parse(exported.stdout);
  data.users[0].name = "Alice Smith";
  writeFileSync(file, stringify(data));
  return { dataDir, file };
}

storePerTest(test);

test("apply appends one cli record per changed org, with before/after and the deploy revision", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-apply-audit-"));
  try {
    const seed = await openDataStore(process.env, dataDir, { create: true });
    await insertOrg(seed.db, ORG, "Audit Corp");
    await seed.db
      .updateTable("organizations")
      .set({ slug: "audit" })
      .where("id", "=", ORG)
      .execute();
    await createUserRepository(seed.db).insert(ORG, {
      extension: "1001",
      name: "Alice",
      routing_type: "human",
      status: "active",
      ring_target: "ext",
      phone_number: null,
      ring_time: 30,
      outbound_did: null,
      call_recording: true,
      sip: { md5_cred: sipDigest(`${PREFIX}1001`, "pw1001") },
    });
    await seed.db.destroy();

    const exported = await runCommand(Export, [
      "--org",
      "audit",
      "--out",
      "-",
      "--data-dir",
      dataDir,
    ]);
    assert.is(exported.code, 0, exported.stderr);
    const file = join(dataDir, "audit.yaml");
    const data = parse(exported.stdout);
    data.users[0].name = "Alice Smith";
    writeFileSync(file, stringify(data));

    const dry = await runCommand(Apply, [file, "--dry-run", "--data-dir", dataDir, "--json"]);
    assert.is(dry.code, 0, dry.stderr);
    const applied = await runCommand(Apply, [file, "--data-dir", dataDir, "--json"]);
    assert.is(applied.code, 0, applied.stderr + String(applied.error));
    const again = await runCommand(Apply, [file, "--data-dir", dataDir, "--json"]);
    assert.is(again.code, 0);

    const store = await openDataStore(process.env, dataDir, { create: false });
    try {
      const { rows, total } = await listAudit(store.db, ORG, {}, { limit: 10, offset: 0 });
      assert.is(total, 1, "the dry run and the unchanged re-apply wrote nothing");
      const record = rows[0]!;
      assert.equal(record.actor, { kind: "cli", id: null });
      assert.is(record.operation, "pbxctl apply");
      assert.is(record.resource_type, "organizations");
      assert.is(record.resource_id, ORG);
      assert.is(record.action, "apply");
      const before = record.before as { users: { name: string; sip: unknown }[] };
      const after = record.after as { users: { name: string; sip: unknown }[] };
      assert.is(before.users[0]!.name, "Alice");
      assert.is(after.users[0]!.name, "Alice Smith");
      assert.equal(after.users[0]!.sip, { md5_cred: "[redacted]" });
      assert.ok(record.diff.some((d) => d.path === "users"));
      assert.is(record.schedules_deploy, true);
      const deployed = applied.result!.orgs[0]!.deploy!;
      assert.is(record.deploy_revision, deployed.revision, "the deploy the apply ran");
    } finally {
      await store.db.destroy();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a failing audit write fails the apply and the org is unchanged (issue 28 item 5)", async () => {
  const { dataDir, file } = await changedOrgFile();
  try {
    let store = await openDataStore(process.env, dataDir, { create: false });
    await breakAuditInserts(store.db);
    await store.db.destroy();

    const applied = await runCommand(Apply, [file, "--no-deploy", "--data-dir", dataDir, "--json"]);
    assert.is(applied.code, 1);
    store = await openDataStore(process.env, dataDir, { create: false });
    try {
      const users = await createUserRepository(store.db).listByOrg(ORG);
      assert.is(users[0]!.name, "Alice", "the change was not made");
    } finally {
      await store.db.destroy();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
