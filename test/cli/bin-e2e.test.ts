// The one slow test: the real `bin/run.js` over the compiled commands in dist/ (npm test builds
// first). Everything else runs the commands in-process.
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "./run-command.js";

function pbxctl(...args: string[]) {
  return spawnSync(process.execPath, [join(ROOT, "bin/run.js"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NODE_ENV: "production" },
  });
}

test("bin/run.js validate: exit 0 on the examples, 1 with file:line:col and no stack trace", async () => {
  assert.ok(existsSync(join(ROOT, "dist/cli/commands/validate.js")), "run `npm run build` first");
  const ok = pbxctl("validate", "orgs");
  assert.is(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, "2 file(s): 0 error(s), 0 warning(s)");

  const dir = await mkdtemp(join(tmpdir(), "pbxctl-e2e-"));
  try {
    const file = join(dir, "bad.yaml");
    await writeFile(
      file,
      "org: { id: 11111111-2222-4333-8444-555555555555, name: X, colour: 1 }\n",
    );
    const bad = pbxctl("validate", file);
    assert.is(bad.status, 1);
    assert.match(bad.stderr, `${file}:1:59 org.colour: unknown field "colour"`);
    assert.not.match(bad.stderr, /^\s+at /m);

    const missing = pbxctl("validate", join(dir, "nope"));
    assert.is(missing.status, 1);
    assert.match(missing.stderr, "no such file or directory");
    assert.not.match(missing.stderr, /^\s+at /m);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("bin/run.js: an unknown command names the nearest one; completion is installed", () => {
  const typo = pbxctl("deplyo", "orgs");
  assert.is(typo.status, 127);
  // oclif wraps long error lines behind a "›" margin: compare the words.
  const words = (text: string) => text.replace(/[\s›]+/g, " ");
  assert.match(words(typo.stderr), 'deplyo is not a pbxctl command. Did you mean "deploy"?');
  const spaced = pbxctl("engine", "int");
  assert.match(words(spaced.stderr), 'Did you mean "engine init"?');
  const completion = pbxctl("autocomplete", "--help");
  assert.is(completion.status, 0, completion.stderr);
  assert.match(completion.stdout, "autocomplete");
});

test("the built CLI loads @oclif/core, yaml, TypeBox and diff from one bundle each; --help lists every command", () => {
  const bundled = /from "(@oclif\/core|yaml|@sinclair\/typebox|diff)";/;
  const modules = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return path.endsWith(join("dist", "vendor")) ? [] : modules(path);
      return entry.name.endsWith(".js") ? [path] : [];
    });
  const importing = modules(join(ROOT, "dist")).filter((file) =>
    bundled.test(readFileSync(file, "utf8")),
  );
  assert.equal(importing, [], "every compiled import points at dist/vendor/");
  assert.match(readFileSync(join(ROOT, "bin/run.js"), "utf8"), "../dist/vendor/oclif-core.js");
  const help = pbxctl("--help");
  assert.is(help.status, 0, help.stderr);
  for (const command of ["validate", "plan", "apply", "deploy", "compile", "serve", "status"]) {
    assert.match(help.stdout, new RegExp(`^  ${command} `, "m"), command);
  }
});

test("bin/run.js: a usage error with --json is one {error} object on stdout", () => {
  const usage = pbxctl("validate", "orgs", "--colour", "--json");
  assert.is(usage.status, 2);
  assert.equal(Object.keys(JSON.parse(usage.stdout)), ["error"]);
  assert.is(usage.stderr, "", "the JSON is the whole answer: no second copy on stderr");
  const failed = pbxctl("validate", "no-such-dir", "--json");
  assert.is(failed.status, 1);
  assert.equal(Object.keys(JSON.parse(failed.stdout)), ["error"]);
  assert.is(failed.stderr, "");
});

test("bin/run.js validate of many files: the load worker, one bundled module, answers as this thread does", async () => {
  // The worker is one file (scripts/bundle-load-worker.mjs): only Node's own modules imported.
  const worker = readFileSync(join(ROOT, "dist/cli/lib/load-worker.js"), "utf8");
  assert.equal(
    [...worker.matchAll(/^import .* from "([^"]+)";/gm)].filter(
      ([, from]) => !from!.startsWith("node:"),
    ),
    [],
  );
  // 60 files start a worker (48 or more, on a machine of two cores or more); copies of one org
  // clash with each other, so every file has problems to report.
  const dir = await mkdtemp(join(tmpdir(), "pbxctl-e2e-many-"));
  try {
    const acme = readFileSync(join(ROOT, "orgs/acme.yaml"), "utf8");
    for (let i = 0; i < 60; i++) {
      await writeFile(join(dir, `org-${String(i).padStart(2, "0")}.yaml`), acme);
    }
    const cold = pbxctl("validate", dir, "--json");
    const warm = pbxctl("validate", dir, "--json");
    const uncached = pbxctl("validate", dir, "--json", "--no-cache");
    assert.is(cold.status, 1, cold.stderr);
    const report = JSON.parse(cold.stdout) as { diagnostics: unknown[] };
    assert.ok(report.diagnostics.length >= 59, "every copy clashes with the first");
    assert.is(warm.stdout, cold.stdout);
    assert.is(uncached.stdout, cold.stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the built cache's version key changes with the bundled YAML parser", async () => {
  // Files read plain are read from the parser's tokens (yaml-plain.ts): an entry cached by
  // another parser build is never trusted, as one cached by other rules is not.
  const copy = await mkdtemp(join(tmpdir(), "pbxctl-e2e-version-"));
  try {
    cpSync(join(ROOT, "dist"), join(copy, "dist"), { recursive: true });
    cpSync(join(ROOT, "package.json"), join(copy, "package.json"));
    const versionOf = (root: string) => {
      const module = join(root, "dist/cli/lib/org-file-cache.js");
      const run = spawnSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `console.log((await import(${JSON.stringify(module)})).cacheVersion())`,
        ],
        { encoding: "utf8" },
      );
      assert.is(run.status, 0, run.stderr);
      return run.stdout.trim();
    };
    const original = versionOf(ROOT);
    assert.is(versionOf(copy), original, "the same build, elsewhere: the same key");
    appendFileSync(join(copy, "dist/vendor/yaml.js"), "\n// another build of the parser\n");
    assert.is.not(versionOf(copy), original);
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
});

test.run();
