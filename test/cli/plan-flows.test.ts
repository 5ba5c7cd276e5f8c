// `pbxctl plan` checks the flow assertions beside the org files against what would be deployed:
// a change that breaks a flow is exit 1 with the failing flow named, also in --json.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Compile from "../../src/cli/commands/compile.js";
import Plan from "../../src/cli/commands/plan.js";
import type { PlanResult } from "../../src/cli/lib/plan.js";
import { ROOT, runCommand } from "./run-command.js";

let dir = "";
let orgs = "";
let engine = "";
test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), "pbxctl-plan-flows-"));
  orgs = join(dir, "orgs");
  engine = join(dir, "engine");
  await cp(join(ROOT, "orgs"), orgs, { recursive: true });
  const compiled = await runCommand(Compile, [orgs, "--out", engine]);
  assert.is(compiled.code, 0, compiled.stderr);
});
test.after.each(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("plan with flows beside the orgs: passing flows are listed, the exit code is the plan's", async () => {
  const run = await runCommand(Plan, [orgs, "--against", engine]);
  assert.is(run.code, 0, run.stdout);
  assert.match(run.stdout, "Flows: 3 passed, 0 failed.");
});

test("plan of a change that breaks a flow: exit 1, the flow and the new path named", async () => {
  const acme = join(orgs, "acme.yaml");
  const text = await readFile(acme, "utf8");
  await writeFile(acme, text.replace("timeout_destination: 2000 #", "timeout_destination: 2002 #"));
  const run = await runCommand(Plan, [orgs, "--against", engine, "--json"]);
  assert.is(run.code, 1);
  const plan = JSON.parse(run.stdout) as PlanResult;
  assert.ok(plan.changed);
  const failed = plan.flows!.results.filter((r) => !r.passed);
  assert.equal(
    failed.map((r) => r.name),
    ["Support line overflows to Sales"],
  );
  assert.match(failed[0]!.failures[0]!, "but the call goes queue Support -> queue Billing");
});

test.run();
