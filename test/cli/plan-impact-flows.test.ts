// What `pbxctl plan` adds to the diff: impact lines with --base (one plain line per change,
// above the diff, and in --json), and the flow assertions beside the org files checked against
// what would be deployed (a change that breaks a flow is exit 1 with the flow named).
import { execFileSync } from "node:child_process";
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

test("plan --base: impact lines above the diff, one per change, and in --json", async () => {
  await rm(join(orgs, "flows"), { recursive: true }); // they would (rightly) fail this change
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "pipe" });
  git("init", "--quiet", "--initial-branch=main");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "add", "orgs");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "orgs");
  const acme = join(orgs, "acme.yaml");
  const text = await readFile(acme, "utf8");
  await writeFile(
    acme,
    text.replace(
      "routing_type: ivr # extension | queue | ivr | external\n    routing_destination: 3000",
      "routing_type: queue\n    routing_destination: 2000",
    ),
  );
  const run = await runCommand(Plan, [orgs, "--base", "HEAD"]);
  assert.is(run.code, 2, run.stdout);
  const impactAt = run.stdout.indexOf(
    "DID +918065978001 moves from IVR Main menu (3000) to queue Sales (2000)",
  );
  assert.ok(impactAt >= 0, run.stdout);
  assert.ok(impactAt < run.stdout.indexOf("--- a/"), "impact lines come before the diff");
  assert.match(run.stdout, /^Acme Corp: 1 DID$/m);
  const json = await runCommand(Plan, [orgs, "--base", "HEAD", "--json"]);
  const plan = JSON.parse(json.stdout) as PlanResult;
  assert.equal(plan.impact, [
    {
      orgId: "4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d",
      org: "Acme Corp",
      summary: "Acme Corp: 1 DID",
      lines: ["DID +918065978001 moves from IVR Main menu (3000) to queue Sales (2000)"],
    },
  ]);
});

test.run();
