// `pbxctl serve` as shipped (bin/run.js over dist/, npm test builds first): SIGTERM flushes a
// deploy the debounce still holds before the process exits, and the store records it.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "./run-command.js";

const PASSWORD = "sigterm-test-password";

test("serve: SIGTERM runs the pending deploy, then exits 0", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "pbxctl-serve-"));
  const child = spawn(
    process.execPath,
    [join(ROOT, "bin/run.js"), "serve", "--port", "0", "--data-dir", dataDir],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: "production",
        PBX_ENGINE: "none",
        PBX_ADMIN_PASSWORD: PASSWORD,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let buffered = "";
      child.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        output += chunk.toString();
        for (const line of buffered.split("\n")) {
          if (!line.includes('"pbxctl serving"')) continue;
          resolve((JSON.parse(line) as { url: string }).url);
        }
      });
      void exited.then(() => reject(new Error(`serve exited early:\n${output}`)));
    });
    const auth = await fetch(`${url}/api/v1/admin/auth`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ admin_username: "admin", admin_password: PASSWORD }),
    });
    const { token } = (await auth.json()) as { token: string };
    const created = await fetch(`${url}/api/v1/organizations`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: "Flushed" }),
    });
    assert.is(created.status, 201);
    const org = (await created.json()) as { id: string; context_prefix: string };
    const dialplan = join(dataDir, "asterisk", "orgs", org.context_prefix, "extensions.conf");
    // The save answered; its deploy waits out the debounce (about 800 ms), so nothing is written.
    assert.not.ok(existsSync(dialplan), "deployed before SIGTERM: the debounce did not hold it");

    child.kill("SIGTERM");
    assert.is(await exited, 0, output);
    assert.ok(existsSync(dialplan), `flushed on SIGTERM:\n${output}`);
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
