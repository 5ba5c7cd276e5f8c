import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Compile from "../../src/cli/commands/compile.js";
import Plan from "../../src/cli/commands/plan.js";
import { ROOT, runCommand } from "./run-command.js";

let dir = "";
let orgs = "";
let engine = "";
test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), "pbxctl-plan-"));
  orgs = join(dir, "orgs");
  engine = join(dir, "engine");
  await cp(join(ROOT, "orgs"), orgs, { recursive: true });
  const compiled = await runCommand(Compile, [orgs, "--out", engine]);
  assert.is(compiled.code, 0, compiled.stderr);
});
test.after.each(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ACME = "org_4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d_";

async function edit(file: string, from: string, to: string): Promise<void> {
  const text = await readFile(file, "utf8");
  assert.ok(text.includes(from), `${file} contains ${from}`);
  await writeFile(file, text.replace(from, to));
}

test("no change: exit 0", async () => {
  const run = await runCommand(Plan, [orgs, "--against", engine]);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, "No changes.");
  assert.is(run.result!.changed, false);
});

test("a changed org: unified diff, only the reloads it needs, exit 2", async () => {
  await edit(join(orgs, "acme.yaml"), "ring_time: 15", "ring_time: 16");
  const run = await runCommand(Plan, [orgs, "--against", engine]);
  assert.is(run.code, 2, run.stderr);
  assert.match(
    run.stdout,
    `--- a/orgs/${ACME}/extensions.conf\n+++ b/orgs/${ACME}/extensions.conf`,
  );
  assert.match(run.stdout, /^-.*\b15\b/m);
  assert.match(run.stdout, /^\+.*\b16\b/m);
  assert.match(run.stdout, "Plan: 0 to add, 1 to change, 0 to remove.");
  assert.match(run.stdout, "Reloads:\n  dialplan reload");
  assert.not.match(run.stdout, "res_pjsip");
});

test("a queue change reloads that queue by name", async () => {
  await edit(join(orgs, "globex.yaml"), "penalty: 2", "penalty: 3");
  const run = await runCommand(Plan, [orgs, "--against", engine, "--json"]);
  assert.is(run.code, 2, run.stderr);
  const plan = JSON.parse(run.stdout);
  assert.equal(plan.files, [{ path: "orgs/globex_/queues.conf", action: "change" }]);
  assert.equal(plan.reloads, ["queue reload all globex_q200"]);
  assert.match(plan.diff, "+++ b/orgs/globex_/queues.conf");
});

test("managed files no org produces are shown as removed; other files are ignored", async () => {
  await mkdir(join(engine, "orgs/old_"), { recursive: true });
  await writeFile(join(engine, "orgs/old_/pjsip.conf"), "[old_1001]\ntype=endpoint\n");
  await writeFile(join(engine, "modules.conf"), "[modules]\nautoload=yes\n");
  const run = await runCommand(Plan, [orgs, "--against", engine]);
  assert.is(run.code, 2, run.stderr);
  assert.match(run.stdout, "--- a/orgs/old_/pjsip.conf\n+++ /dev/null");
  assert.match(run.stdout, "Plan: 0 to add, 0 to change, 1 to remove.");
  assert.match(run.stdout, "Reloads:\n  module reload res_pjsip.so");
  assert.not.match(run.stdout, "modules.conf");
});

test("--against and --base are exclusive; one of them is required; both exit 1", async () => {
  const both = await runCommand(Plan, [orgs, "--against", engine, "--base", "HEAD"]);
  assert.is(both.code, 1);
  assert.match(both.error!.message, "--base=HEAD cannot also be provided when using --against");
  const neither = await runCommand(Plan, [orgs]);
  assert.is(neither.code, 1);
  assert.match(
    neither.error!.message,
    "At least one of the following must be provided: --against, --base",
  );
});

test("invalid org files: diagnostics and exit 1, not 2", async () => {
  await edit(join(orgs, "globex.yaml"), "action_destination: 200", "action_destination: 299");
  const run = await runCommand(Plan, [orgs, "--against", engine]);
  assert.is(run.code, 1);
  assert.match(run.stderr, "ivrs[0].options[0].action_destination: no queue with number 299");
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "test",
      GIT_AUTHOR_EMAIL: "test@example.invalid",
      GIT_COMMITTER_NAME: "test",
      GIT_COMMITTER_EMAIL: "test@example.invalid",
      GIT_CONFIG_NOSYSTEM: "1",
      HOME: dir,
    },
  });
}

test("--base: the configuration change between a git revision and the working tree", async () => {
  git(dir, "init", "--quiet", "--initial-branch=main");
  git(dir, "add", "orgs");
  git(dir, "commit", "--quiet", "-m", "orgs");

  const unchanged = await runCommand(Plan, [orgs, "--base", "HEAD"]);
  assert.is(unchanged.code, 0, unchanged.stderr);
  assert.match(unchanged.stdout, "No changes between the org files at HEAD and the working tree");
  assert.match(unchanged.stdout, "nothing to compare");
  assert.not.match(unchanged.stdout, "up to date", "--base never reads the engine");

  await edit(join(orgs, "globex.yaml"), "penalty: 2", "penalty: 3");
  const changed = await runCommand(Plan, [orgs, "--base", "HEAD"]);
  assert.is(changed.code, 2, changed.stderr);
  assert.match(changed.stdout, "--- a/orgs/globex_/queues.conf\n+++ b/orgs/globex_/queues.conf");
  assert.match(changed.stdout, "Reloads:\n  queue reload all globex_q200");

  // A new org did not exist at the base revision: all its files are added.
  const initech = (await readFile(join(orgs, "globex.yaml"), "utf8"))
    .replace("9b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e5f", "12345678-4a3b-4c2d-8e1f-0a9b8c7d6e5f")
    .replace("context_prefix: globex_", "context_prefix: initech_")
    .replace("slug: globex", "slug: initech")
    .replace(/\+91806597802/g, "+91222222222")
    // Its own carrier address: globex's is globex's inbound traffic.
    .replace(/198\.51\.100\.7/g, "198.51.100.8");
  await writeFile(join(orgs, "initech.yaml"), initech);
  const added = await runCommand(Plan, [orgs, "--base", "HEAD", "--json"]);
  assert.is(added.code, 2, added.stderr);
  const plan = JSON.parse(added.stdout);
  const actions = plan.files.map((f: { path: string; action: string }) => `${f.action} ${f.path}`);
  for (const name of ["extensions.conf", "pjsip.conf", "queues.conf"]) {
    assert.ok(actions.includes(`add orgs/initech_/${name}`), actions.join("\n"));
  }

  // A deleted org file existed at the base: its files are removed. (The example flows call
  // acme's DIDs and would fail the plan, which is not what this step is about.)
  await rm(join(orgs, "initech.yaml"));
  await rm(join(orgs, "flows"), { recursive: true });
  git(dir, "rm", "--quiet", "orgs/acme.yaml");
  const removed = await runCommand(Plan, [orgs, "--base", "HEAD", "--json"]);
  assert.is(removed.code, 2, removed.stderr);
  const removedActions = JSON.parse(removed.stdout).files.map(
    (f: { path: string; action: string }) => `${f.action} ${f.path}`,
  );
  assert.ok(removedActions.includes(`remove orgs/${ACME}/pjsip.conf`), removedActions.join("\n"));
});

test("--base with an unknown revision: exit 1 with one line", async () => {
  git(dir, "init", "--quiet");
  const run = await runCommand(Plan, [orgs, "--base", "no-such-rev"]);
  assert.is(run.code, 1);
  assert.match(run.error!.message, "no-such-rev: not a revision of a git repository");
});

test.run();
