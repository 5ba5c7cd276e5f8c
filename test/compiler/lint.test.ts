// Golden cases of the lint rules: fixtures/lint/<rule>/input.yaml gives exactly expected.txt
// (`file:line:col path: message`), every finding of that rule and no other. UPDATE_GOLDEN=1
// rewrites them (--strict: test/cli/lint.test.ts). Plus the pattern-overlap check behind
// overlapping-patterns.
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadOrgFiles } from "../../src/cli/lib/org-files.js";
import { patternsOverlap } from "../../src/compiler/dial-pattern.js";
import { LINT_RULES } from "../../src/compiler/lint.js";
import { formatDiagnostic } from "../../src/model/files.js";
import { expectGoldenText, FIXTURES } from "./golden.js";

const DIR = join(FIXTURES, "lint");
const cases = readdirSync(DIR).filter((name) => existsSync(join(DIR, name, "input.yaml")));

test("one lint fixture per rule, and a clean one", () => {
  assert.equal(cases.sort(), [...Object.keys(LINT_RULES), "clean"].sort());
});

for (const name of cases) {
  test(`lint golden: ${name}`, async () => {
    const loaded = await loadOrgFiles([join(DIR, name, "input.yaml")], {
      env: {},
      cache: false,
      lint: true,
    });
    assert.equal(
      loaded.diagnostics.filter((d) => d.severity === "error"),
      [],
      "valid input",
    );
    const findings = loaded.lint;
    const text = findings
      .map((d) => `${formatDiagnostic({ ...d, file: relative(FIXTURES, d.file) })}\n`)
      .join("");
    expectGoldenText(join(DIR, name, "expected.txt"), text);
    if (name === "clean") assert.is(findings.length, 0);
    else {
      assert.ok(findings.length > 0, `${name} finds nothing`);
      for (const d of findings) assert.match(d.message, `[${name}]`);
    }
  });
}

test("patternsOverlap: some number matches both", () => {
  const yes: [string, string][] = [
    ["_X.", "_91XXXXXXXXXX"],
    ["_0XXXXXXXXXX", "_00X."],
    ["_9!", "9"],
    ["_[6-9]XXX", "_7ZZZ"],
    ["1234", "_1XXX"],
  ];
  const no: [string, string][] = [
    ["_91XXXXXXXXXX", "_1NXXNXXXXXX"],
    ["_[2-5]XX", "_[6-9]XX"],
    ["_0XXXXXXXXXX", "_00XXXXXXXXXX"],
    ["_X.", "_+X."],
    ["123", "124"],
  ];
  for (const [a, b] of yes) assert.ok(patternsOverlap(a, b) && patternsOverlap(b, a), `${a} ${b}`);
  for (const [a, b] of no)
    assert.not.ok(patternsOverlap(a, b) || patternsOverlap(b, a), `${a} ${b}`);
});

test.run();
