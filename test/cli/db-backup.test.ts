// `pbxctl db backup FILE` of a running server's store: the copy opens, passes
// PRAGMA integrity_check, and a server started on it (with the data directory's secret files)
// gives the same API answers as the original did when the copy was taken; what was written
// afterwards is not in it.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, PostgresDialect } from "kysely";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import DbBackup from "../../src/cli/commands/db/backup.js";
import {
  backupStore,
  DATA_DIR_SECRETS,
  StoreBackupError,
} from "../../src/domain/operations/store-backup.js";
import type { Database } from "../../src/store/schema.js";
import { type Rig, startRig } from "../integration/helpers.js";
import { runCommand } from "./run-command.js";

const test = suite("pbxctl db backup");

const READS = ["/users", "/queues", "/trunks", "/outbound-routes", "/ivrs", "/dids"];

async function answers(rig: Rig, headers: Record<string, string>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const path of READS) {
    const res = await rig.request("GET", `/api/v1${path}`, { headers });
    assert.is(res.status, 200, `${path}: ${res.text}`);
    out.push(res.body);
  }
  return out;
}

test("a backup of a running server's store opens, is intact and serves the same answers", async () => {
  const rig = await startRig();
  const backups = mkdtempSync(join(tmpdir(), "pbx-backup-"));
  const restored = mkdtempSync(join(tmpdir(), "pbx-restored-"));
  let second: Rig | undefined;
  try {
    const org = await rig.createOrg("Acme");
    const headers = { "x-api-key": org.api_key };
    const post = async (path: string, body: unknown) => {
      const res = await rig.request("POST", `/api/v1${path}`, { headers, body });
      assert.is(res.status, 201, `${path}: ${res.text}`);
    };
    await post("/users", { extension: "101", name: "Alice" });
    await post("/users", { extension: "102", name: "Bob" });
    await post("/queues", { number: "2000", name: "Sales" });
    await post("/trunks", { name: "carrier", host: "203.0.113.10" });
    const before = await answers(rig, headers);

    const file = join(backups, "pbx.db");
    const out = await runCommand(DbBackup, [file, "--data-dir", rig.dataDir]);
    assert.is(out.code, 0, out.stderr + String(out.error));
    assert.match(out.stdout, `to ${file}`);
    assert.match(out.stdout, "integrity ok");
    assert.match(out.stdout, "jwt-secret, server-key, admin-password.hash");
    // Written after the copy: not in it.
    await post("/users", { extension: "103", name: "Carol" });

    const copy = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
    try {
      assert.is(copy.pragma("integrity_check", { simple: true }), "ok");
      assert.is(copy.pragma("journal_mode", { simple: true }), "delete", "one self-contained file");
    } finally {
      copy.close();
    }
    assert.not.ok(existsSync(`${file}.partial`));

    const again = await runCommand(DbBackup, [file, "--data-dir", rig.dataDir]);
    assert.is(again.code, 1);
    assert.match(String(again.error?.message), `${file} exists; pass --force to overwrite it`);
    const self = await runCommand(DbBackup, [
      join(rig.dataDir, "pbx.db"),
      "--data-dir",
      rig.dataDir,
      "--force",
    ]);
    assert.is(self.code, 1);
    assert.match(String(self.error?.message), "is the store itself");

    // The restore the guide describes: the copy as pbx.db beside the secret files.
    copyFileSync(file, join(restored, "pbx.db"));
    for (const name of DATA_DIR_SECRETS) {
      if (existsSync(join(rig.dataDir, name)))
        copyFileSync(join(rig.dataDir, name), join(restored, name));
    }
    second = await startRig({ dataDir: restored });
    assert.equal(await answers(second, headers), before, "the same answers, with the same org key");
  } finally {
    await second?.close();
    await rig.close();
    rmSync(backups, { recursive: true, force: true });
    rmSync(restored, { recursive: true, force: true });
  }
});

test("a PostgreSQL store is refused with the pg_dump way", async () => {
  // Never connected: the dialect alone says which engine the handle speaks.
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: async () => ({}) as never }),
  });
  try {
    await backupStore(
      { dataDir: "/nowhere", dbFile: "/nowhere/pbx.db", db, serverKey: Buffer.alloc(32) },
      "/tmp/x.db",
      {
        overwrite: false,
      },
    );
    assert.unreachable("a PostgreSQL store has no file to copy");
  } catch (error) {
    assert.instance(error, StoreBackupError);
    assert.match((error as Error).message, "pg_dump --format=custom");
    assert.match((error as Error).message, "docs/beyond-one-machine.md");
  }
});

test("no store in the data directory: exit 1 with one line", async () => {
  const empty = mkdtempSync(join(tmpdir(), "pbx-backup-none-"));
  try {
    const out = await runCommand(DbBackup, [join(empty, "copy.db"), "--data-dir", empty]);
    assert.is(out.code, 1);
    assert.match(String(out.error?.message), "no store in");
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test.run();
