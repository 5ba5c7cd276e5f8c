// `pbxctl serve` runs one esbuild bundle (dist/api/serve-modules.js, scripts/bundle-serve.mjs;
// npm test builds first). What a bundle can break and the suites under tsx never see: a module
// finding a file beside itself through import.meta.url (now the bundle's directory), and the
// packages left outside it, loaded at run time. The eSpeak preview crosses all of those: the
// worker thread's module (../tts/synthesis-worker.js), espeak-ng and its .wasm, wavefile.
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "./run-command.js";
import { adminToken, postJson, startServeProcess } from "./serve-process.js";

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
  const serve = await startServeProcess(dataDir, {
    PBX_ENGINE: "none",
    PBX_ADMIN_PASSWORD: PASSWORD,
  });
  try {
    const token = await adminToken(serve.url, PASSWORD);
    const org = await postJson(
      serve.url,
      "/organizations",
      { name: "Bundled" },
      { authorization: `Bearer ${token}` },
    );
    const { api_key } = (await org.json()) as { api_key: string };
    const preview = await postJson(
      serve.url,
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
    serve.child.kill("SIGTERM");
    assert.is(await serve.exited, 0, serve.output());
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
