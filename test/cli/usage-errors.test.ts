// Usage errors in --json mode (issue 19, defect 3): one `{"error": "..."}` object, never the
// parser's state, and the documented exit code (2; plan keeps 1 because its 2 means "changes").
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Plan from "../../src/cli/commands/plan.js";
import Validate from "../../src/cli/commands/validate.js";
import { ROOT, runCommand } from "./run-command.js";

function onlyError(stdout: string): string {
  const parsed = JSON.parse(stdout) as Record<string, unknown>;
  assert.equal(Object.keys(parsed), ["error"], stdout);
  assert.type(parsed.error, "string");
  return parsed.error as string;
}

test("plan --json without --against/--base prints {error} only, and exits 1 (2 means changes)", async () => {
  const out = await runCommand(Plan, [join(ROOT, "orgs"), "--json"]);
  assert.is(out.code, 1);
  const error = onlyError(out.stdout);
  assert.match(error, "--against");
  assert.match(error, "--base");
  assert.ok(out.stdout.split("\n").length < 10, `short, got ${out.stdout.length} characters`);
  assert.not.match(out.stdout, "package.json");
});

test("an unknown flag with --json prints {error} and exits 2", async () => {
  const out = await runCommand(Validate, [join(ROOT, "orgs"), "--colour", "--json"]);
  assert.is(out.code, 2);
  assert.match(onlyError(out.stdout), "--colour");
});

test("an unknown flag names the nearest one, as an unknown command does", async () => {
  const typo = await runCommand(Validate, [join(ROOT, "orgs"), "--strcit"]);
  assert.is(typo.code, 2);
  assert.match(
    String(typo.error?.message),
    "Nonexistent flag: --strcit. Did you mean --strict for --strcit?",
  );
  const json = await runCommand(Plan, [join(ROOT, "orgs"), "--agianst", "x", "--json"]);
  assert.match(onlyError(json.stdout), "Did you mean --against for --agianst?");
  // Nothing near: no guess.
  const far = await runCommand(Validate, [join(ROOT, "orgs"), "--colour", "--json"]);
  assert.not.match(onlyError(far.stdout), "Did you mean");
});

test("a failure with --json is {error} too", async () => {
  const out = await runCommand(Validate, [join(ROOT, "no-such-dir"), "--json"]);
  assert.is(out.code, 1);
  assert.match(onlyError(out.stdout), "no-such-dir");
});

test.run();
