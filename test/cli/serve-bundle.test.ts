// `pbxctl serve` runs one esbuild bundle (dist/api/serve-modules.js, scripts/bundle-serve.mjs;
// npm test builds first). What a bundle can break and the suites under tsx never see: a module
// finding a file beside itself through import.meta.url (now the bundle's directory), and the
// packages left outside it, loaded at run time. The eSpeak preview crosses all of those: the
// worker thread's module (../tts/synthesis-worker.js), espeak-ng and its .wasm, wavefile.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "./run-command.js";

const PASSWORD = "bundle-test-password";

test("the built serve module is one bundle: it imports only Node's modules and the native addon", () => {
  const bundle = readFileSync(join(ROOT, "dist/api/serve-modules.js"), "utf8");
  const imported = [...bundle.matchAll(/^import .* from "([^"]+)";?$/gm)].map((m) => m[1]);
  // Node's own modules, and better-sqlite3: a native addon cannot be bundled.
  for (const specifier of imported) {
    assert.match(specifier!, /^(node:|better-sqlite3$)/, `imports ${specifier}`);
  }
  assert.not.match(bundle, /from "kysely"|from "koa"|from "\.\.?\//);
});

test("serve from the bundle: a speech preview runs the worker thread and espeak-ng", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "pbxctl-serve-bundle-"));
  const child = spawn(
    process.execPath,
    [join(ROOT, "bin/run.js"), "serve", "--port", "0", "--data-dir", dataDir],
    {
      cwd: ROOT,
      env: { ...process.env, PBX_ENGINE: "none", PBX_ADMIN_PASSWORD: PASSWORD },
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
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        for (const line of output.split("\n")) {
          if (line.includes('"pbxctl serving"')) resolve((JSON.parse(line) as { url: string }).url);
        }
      });
      void exited.then(() => reject(new Error(`serve exited early:\n${output}`)));
    });
    const post = async (path: string, body: unknown, headers: Record<string, string>) =>
      fetch(`${url}/api/v1${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    const auth = await post(
      "/admin/auth",
      { admin_username: "admin", admin_password: PASSWORD },
      {},
    );
    const { token } = (await auth.json()) as { token: string };
    const org = await post(
      "/organizations",
      { name: "Bundled" },
      { authorization: `Bearer ${token}` },
    );
    const { api_key } = (await org.json()) as { api_key: string };
    const preview = await post(
      "/tts/preview",
      { text: "Hello", language: "en-IN" },
      { "x-api-key": api_key },
    );
    const wav = Buffer.from(await preview.arrayBuffer());
    assert.is(preview.status, 200, wav.toString());
    assert.is(preview.headers.get("content-type"), "audio/wav");
    assert.is(wav.subarray(0, 4).toString(), "RIFF");
    assert.ok(wav.length > 1000, `${wav.length} bytes of speech`);
  } finally {
    child.kill("SIGTERM");
    assert.is(await exited, 0, output);
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
