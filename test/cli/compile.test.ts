import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Compile from "../../src/cli/commands/compile.js";
import { compileAll } from "../../src/compiler/index.js";
import { loadOrgPaths } from "../../src/model/files.js";
import { ROOT, runCommand } from "./run-command.js";

let dir = "";
test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), "pbxctl-compile-"));
});
test.after.each(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ACME = "org_4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d_";

test("compiles the example orgs into --out, creating directories", async () => {
  const out = join(dir, "asterisk");
  const run = await runCommand(Compile, [join(ROOT, "orgs"), "--out", out]);
  assert.is(run.code, 0, run.stderr);
  const files = (await readdir(out, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(out.length + 1))
    .sort();
  // Exactly the files the compiler produces for these orgs, at their paths.
  const loaded = await loadOrgPaths([join(ROOT, "orgs")], {});
  const expected = compileAll(
    loaded.orgs.map((o) => o.state),
    { environment: "prod", staging_endpoint: "staging-tunnel" },
  ).files.map((f) => f.path);
  assert.equal(files, [...expected].sort());
  for (const path of ["extensions.conf", "gateway/extensions.conf", `orgs/${ACME}/pjsip.conf`]) {
    assert.ok(files.includes(path), path);
  }
  const top = await readFile(join(out, "extensions.conf"), "utf8");
  assert.match(top, `orgs/${ACME}/extensions.conf`);
  assert.match(
    run.stdout,
    new RegExp(`wrote ${files.length} file\\(s\\), \\d+ bytes, for 2 org\\(s\\)`),
  );
  assert.equal(
    run.result!.files.map((f: { path: string }) => f.path),
    files,
  );
});

test("--json returns the written files", async () => {
  const out = join(dir, "json");
  const run = await runCommand(Compile, [join(ROOT, "orgs/globex.yaml"), "--out", out, "--json"]);
  assert.is(run.code, 0, run.stderr);
  const json = JSON.parse(run.stdout);
  assert.is(json.orgs, 1);
  assert.ok(json.files.some((f: { path: string }) => f.path === "orgs/globex_/pjsip.conf"));
});

test("an org with errors: nothing is written, exit 1", async () => {
  const file = join(dir, "bad.yaml");
  await writeFile(
    file,
    "org: { id: 11111111-2222-4333-8444-555555555555, name: Bad }\nusers: [{ extension: 1001, name: A }]\n",
  );
  const out = join(dir, "never");
  const run = await runCommand(Compile, [file, "--out", out]);
  assert.is(run.code, 1);
  assert.match(run.stderr, `${file}:2:9 users[0].sip: SIP credential required`);
  assert.match(run.error!.message, "1 error(s) in org files; nothing was compiled");
  await readdir(out).then(
    () => assert.unreachable("the output directory must not exist"),
    () => {},
  );
});

test("--environment is checked against its options", async () => {
  const run = await runCommand(Compile, [join(ROOT, "orgs"), "--out", dir, "--environment", "dev"]);
  assert.is(run.code, 2);
  assert.match(run.error!.message, "Expected --environment=dev to be one of: prod, staging, oss");
});

test.run();
