// `pbxctl serve` as shipped (bin/run.js over dist/, npm test builds first): SIGTERM flushes a
// deploy the debounce still holds before the process exits, and the store records it.
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { adminToken, postJson, startServeProcess } from "./serve-process.js";

const PASSWORD = "sigterm-test-password";

test("serve: SIGTERM runs the pending deploy, then exits 0", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "pbxctl-serve-"));
  const serve = await startServeProcess(dataDir, {
    NODE_ENV: "production",
    PBX_ENGINE: "none",
    PBX_ADMIN_PASSWORD: PASSWORD,
  });
  const { child, url, exited } = serve;
  try {
    const token = await adminToken(url, PASSWORD);
    const created = await postJson(
      url,
      "/organizations",
      { name: "Flushed" },
      { authorization: `Bearer ${token}` },
    );
    assert.is(created.status, 201);
    const org = (await created.json()) as { id: string; context_prefix: string };
    const dialplan = join(dataDir, "asterisk", "orgs", org.context_prefix, "extensions.conf");
    // The save answered; its deploy waits out the debounce (about 800 ms), so nothing is written.
    assert.not.ok(existsSync(dialplan), "deployed before SIGTERM: the debounce did not hold it");

    child.kill("SIGTERM");
    assert.is(await exited, 0, serve.output());
    assert.ok(existsSync(dialplan), `flushed on SIGTERM:\n${serve.output()}`);
    assert.match(
      readFileSync(join(dataDir, "asterisk", "extensions.conf"), "utf8"),
      org.context_prefix,
    );
    const store = new SqliteDatabase(join(dataDir, "pbx.db"), { readonly: true });
    try {
      const records = store
        .prepare("SELECT result, trigger FROM deploy_records WHERE unit = ?")
        .all(`org:${org.context_prefix}`) as { result: string; trigger: string }[];
      assert.equal(records, [{ result: "ok", trigger: "schedule" }]);
    } finally {
      store.close();
    }
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
