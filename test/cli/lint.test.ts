// `pbxctl lint` and the lint part of `validate`: findings are warnings at file:line:col (exit 0),
// errors with --strict (exit 1); a file with errors is not linted.
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Lint from "../../src/cli/commands/lint.js";
import Validate from "../../src/cli/commands/validate.js";
import { ROOT, runCommand } from "./run-command.js";

const ZERO = join(ROOT, "fixtures", "lint", "timeout-zero", "input.yaml");

test("lint: a finding is a warning at file:line:col, exit 0", async () => {
  const out = await runCommand(Lint, [ZERO]);
  assert.is(out.code, 0, out.stderr);
  assert.match(out.stderr, `${ZERO}:4:91 ivrs[0].timeout: warning: [timeout-zero]`);
  assert.match(out.stdout, "1 file(s): 0 error(s), 1 warning(s)");
});

test("lint --strict: the same finding is an error, exit 1", async () => {
  const out = await runCommand(Lint, [ZERO, "--strict"]);
  assert.is(out.code, 1);
  assert.match(out.stderr, `${ZERO}:4:91 ivrs[0].timeout: [timeout-zero]`);
});

test("validate shows lint findings as warnings too, and --strict there as errors", async () => {
  const out = await runCommand(Validate, [ZERO]);
  assert.is(out.code, 0);
  assert.match(out.stderr, "warning: [timeout-zero]");
  const strict = await runCommand(Validate, [ZERO, "--strict", "--json"]);
  assert.is(strict.code, 1);
  assert.is(JSON.parse(strict.stdout).errors, 1);
});

test("the example orgs are lint-clean", async () => {
  const out = await runCommand(Lint, [join(ROOT, "orgs"), "--strict"]);
  assert.is(out.code, 0, out.stderr);
});

test.run();
