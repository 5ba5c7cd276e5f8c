// `pbxctl serve --pretty` as shipped (bin/run.js over dist/, npm test builds first) with its logs
// going to a file, as under systemd or `2>serve.log`: plain text, no colour codes; and with
// PBX_ENGINE=ami, a recordings directory that does not exist is warned about at start.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "./run-command.js";

test("serve --pretty into a file: no colour codes; a missing recordings directory is warned about", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "pbxctl-pretty-"));
  const missing = join(dataDir, "no-such-monitor");
  const { FORCE_COLOR: _force, NO_COLOR: _no, ...env } = process.env;
  const child = spawn(
    process.execPath,
    [join(ROOT, "bin/run.js"), "serve", "--pretty", "--port", "0", "--data-dir", dataDir],
    {
      cwd: ROOT,
      env: {
        ...env,
        PBX_ENGINE: "ami",
        // Nothing listens there: the server starts anyway and keeps trying.
        PBX_AMI_PORT: "1",
        PBX_AMI_USERNAME: "pbxctl",
        PBX_AMI_SECRET: "not-used-secret",
        PBX_RECORDINGS_DIR: missing,
        PBX_ADMIN_PASSWORD: "pretty-test-password",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("recordings directory does not exist")) resolve();
      };
      child.stdout.on("data", read);
      child.stderr.on("data", read);
      void exited.then(() => reject(new Error(`serve exited early:\n${output}`)));
    });
    assert.match(output, "pbxctl serving");
    assert.match(output, missing);
    assert.match(output, "<astspooldir>/monitor");
    assert.not.match(output, "\u001b[", "no escape codes in a file");
  } finally {
    // Nothing to keep: a SIGTERM would wait out the unreachable engine to flush its deploys.
    child.kill("SIGKILL");
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
