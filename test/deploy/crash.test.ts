import { spawn } from "node:child_process";
import { open, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FileDeployLog } from "../../src/deploy/deploy-log.js";
import { Deployer } from "../../src/deploy/deployer.js";
import { orgUnit } from "../../src/deploy/units.js";
import { createNoneTarget } from "../../src/engine/none-target.js";
import { bigOrgFiles } from "./crash-files.js";
import { tempDir } from "./helpers.js";

const child = new URL("./crash-child.ts", import.meta.url).pathname;

async function tempFilesIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries.filter((name) => name.endsWith(".tmp"));
}

async function readHead(file: string): Promise<string> {
  const handle = await open(file, "r").catch(() => null);
  if (!handle) return "";
  try {
    const buffer = Buffer.alloc(3);
    await handle.read(buffer, 0, 3, 0);
    return buffer.toString();
  } finally {
    await handle.close();
  }
}

test("SIGKILL in the middle of a deploy leaves every file either old or new", async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const deployer = new Deployer({
      engineDir: dir,
      target: createNoneTarget(),
      log: new FileDeployLog(dir),
    });
    const old = bigOrgFiles("a");
    const next = bigOrgFiles("b");
    await deployer.deploy(orgUnit("org_big_"), old);

    const proc = spawn(process.execPath, ["--import", "tsx", child, dir, "b"], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, PBX_CRASH_CHILD: "1" },
    });
    let out = "";
    proc.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      proc.on("exit", (_code, signal) => resolve(signal)),
    );
    // Kill once the first file is replaced and a temp file shows the next write under way.
    const orgDir = join(dir, "orgs/org_big_");
    const deadline = Date.now() + 20_000;
    let sawTemp = false;
    while (Date.now() < deadline && !out.includes("done")) {
      const head = await readHead(join(orgDir, "extensions.conf"));
      if (head === "; b" && (await tempFilesIn(orgDir)).length > 0) {
        sawTemp = true;
        proc.kill("SIGKILL");
        break;
      }
    }
    const signal = await exited;
    assert.ok(sawTemp, "the child was killed while writing");
    assert.is(signal, "SIGKILL");

    let oldCount = 0;
    let newCount = 0;
    for (const [i, file] of old.entries()) {
      const content = await readFile(join(dir, file.path), "utf8");
      if (content === file.content) oldCount++;
      else if (content === next[i]!.content) newCount++;
      else assert.unreachable(`${file.path} is partial (${content.length} bytes)`);
    }
    assert.is(oldCount + newCount, old.length);
    assert.ok(
      newCount >= 1 && oldCount >= 1,
      `killed between files: ${newCount} new, ${oldCount} old`,
    );

    // The next deploy finishes the job and sweeps the interrupted write's temp file.
    const record = await deployer.deploy(orgUnit("org_big_"), next);
    assert.is(record.result, "ok");
    assert.is(record.filesWritten.length, oldCount);
    assert.equal(await tempFilesIn(orgDir), []);
  } finally {
    await cleanup();
  }
});

test.run();
