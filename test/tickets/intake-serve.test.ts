// `pbxctl intake serve` over the compiled commands (npm test builds first): the intake alone on
// its own port, writing the ticket into the data directory's store (PostgreSQL under test:pg), stopped by SIGTERM.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openStore } from "../../src/store/database.js";
import { createTicketRepository } from "../../src/store/ticket-repository.js";
import { ROOT } from "../cli/run-command.js";
import { freshStoreLocation } from "../store/test-database.js";

test("intake serve answers 202 and the call becomes a ticket in the shared store", async () => {
  assert.ok(
    existsSync(join(ROOT, "dist/cli/commands/intake/serve.js")),
    "run `npm run build` first",
  );
  const dir = mkdtempSync(join(tmpdir(), "pbx-intake-"));
  const store = await freshStoreLocation(join(dir, "pbx.db"));
  const storeEnv =
    store.location.kind === "postgres" ? { PBX_DATABASE_URL: store.location.url } : {};
  const child = spawn(
    process.execPath,
    [join(ROOT, "bin/run.js"), "intake", "serve", "--port", "0", "--data-dir", dir],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...storeEnv,
        PBX_INTERNAL_KEY: "k",
        PBX_ADMIN_PASSWORD: "pw",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  try {
    let out = "";
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split("\n").find((l) => l.includes('"intake serving"'));
        if (line) resolve(JSON.parse(line).url as string);
      });
      child.once("exit", () => reject(new Error(`exited early: ${out}`)));
    });
    const orgId = "11111111-2222-4333-8444-555555555555";
    const res = await fetch(`${url}/auto-ticket/${orgId}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-internal-key": "k" },
      body: JSON.stringify({
        linkedid: "alone-1",
        channel: "PJSIP/org_x_trunk-1",
        src: "919812345678",
        dcontext: "org_x_queue",
        disposition: "NO ANSWER",
        direction: "inbound",
        calldate: "2026-03-01T10:00:00.000Z",
      }),
    });
    assert.is(res.status, 202);
    child.kill("SIGTERM");
    assert.is(await exited, 0);
    const db = await openStore(store.location);
    try {
      const tickets = await createTicketRepository(db).list(orgId, {}, { limit: 10, offset: 0 });
      assert.equal(
        tickets.rows.map((t) => [t.source, t.linkedid]),
        [["queue_timeout", "alone-1"]],
      );
    } finally {
      await db.destroy();
    }
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    await store.drop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("intake serve refuses to start without PBX_INTERNAL_KEY (an open intake takes anyone's tickets)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pbx-intake-"));
  const { PBX_INTERNAL_KEY: _unset, ...env } = process.env;
  try {
    const result = spawnSync(
      process.execPath,
      [join(ROOT, "bin/run.js"), "intake", "serve", "--port", "0", "--data-dir", dir],
      { cwd: ROOT, env: { ...env, PBX_ADMIN_PASSWORD: "pw" }, encoding: "utf8", timeout: 20_000 },
    );
    assert.is(result.status, 1, result.stderr);
    assert.match(result.stderr, "intake serve needs PBX_INTERNAL_KEY");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
