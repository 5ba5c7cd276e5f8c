// `pbxctl db migrate` brings the store of PBX_DATABASE_URL (else <data-dir>/pbx.db) up to date and
// names what it ran; `serve --no-migrate` refuses a store that is behind instead of migrating it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startServer } from "../../src/api/server.js";
import DbMigrate, { type DbMigrateResult } from "../../src/cli/commands/db/migrate.js";
import { loadConfig } from "../../src/config.js";
import { StoreBehindError } from "../../src/store/database.js";
import { migrations } from "../../src/store/migrations/index.js";
import { emptyStoreLocation } from "../store/test-database.js";
import { runCommand } from "./run-command.js";

/** An empty store for the test, named to the commands as the process environment would. */
async function withEmptyStore(run: (dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-migrate-"));
  const store = await emptyStoreLocation(join(dataDir, "pbx.db"));
  const before = process.env.PBX_DATABASE_URL;
  if (store.location.kind === "postgres") process.env.PBX_DATABASE_URL = store.location.url;
  try {
    await run(dataDir);
  } finally {
    if (before === undefined) delete process.env.PBX_DATABASE_URL;
    else process.env.PBX_DATABASE_URL = before;
    await store.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test("db migrate runs every pending migration once and names it", async () => {
  await withEmptyStore(async (dataDir) => {
    const first = await runCommand(DbMigrate, ["--data-dir", dataDir, "--json"]);
    assert.is(first.code, 0, first.stderr);
    const result = first.result as DbMigrateResult;
    assert.equal(
      result.applied,
      migrations.map(([name]) => name),
    );
    const again = await runCommand(DbMigrate, ["--data-dir", dataDir]);
    assert.is(again.code, 0, again.stderr);
    assert.is(again.stdout.trim(), "the store is up to date");
  });
});

test("serve --no-migrate refuses a store that is behind, and starts once it is migrated", async () => {
  await withEmptyStore(async (dataDir) => {
    const config = loadConfig(
      { ...process.env, PBX_ADMIN_PASSWORD: "pw" },
      { dataDir, port: 0, host: "127.0.0.1" },
    );
    const logger = pino({ level: "silent" });
    const deployScheduler = { recordDeploy: async () => {}, scheduleDeploy: () => {} };
    try {
      await startServer({ config, logger, migrate: false, deployScheduler, env: {} });
      assert.unreachable("a store that is behind was served");
    } catch (error) {
      assert.instance(error, StoreBehindError);
      assert.match(
        (error as Error).message,
        /^the store needs migrating \(0001-organizations, .* pending\): run pbxctl db migrate, or serve without --no-migrate$/,
      );
    }
    assert.is((await runCommand(DbMigrate, ["--data-dir", dataDir])).code, 0);
    const running = await startServer({ config, logger, migrate: false, deployScheduler, env: {} });
    const health = await fetch(`${running.url}/health`);
    assert.is(health.status, 200);
    await running.close();
  });
});

test.run();
