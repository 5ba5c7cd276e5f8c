import { test } from "uvu";
import * as assert from "uvu/assert";
import { caseOutput, checkCase, compileCase, listCases, realtimeCaseOutput } from "./golden.js";

const cases = listCases();

test("there are golden cases", () => {
  assert.ok(cases.length >= 12, `only ${cases.length} cases`);
});

for (const name of cases) {
  test(`golden: ${name}`, () => {
    const first = caseOutput(compileCase(name));
    const second = caseOutput(compileCase(name));
    assert.equal([...second], [...first], "compiling twice must give byte-identical output");
    const problems = checkCase(name, first);
    if (problems.length > 0) {
      assert.unreachable(
        `${problems.join("\n")}\nRun 'UPDATE_GOLDEN=1 npm test' if the new output is correct, and review 'git diff fixtures/'.`,
      );
    }
  });
}

// The same fixtures in realtime mode: fixtures/<case>/realtime/orgs/<prefix>/pjsip.rows.json and
// the identify-only pjsip.conf (src/compiler/pjsip-realtime.ts).
for (const name of cases) {
  test(`golden realtime: ${name}`, () => {
    const first = realtimeCaseOutput(name);
    assert.equal([...realtimeCaseOutput(name)], [...first], "realtime rows must be deterministic");
    const problems = checkCase(name, first, "realtime");
    if (problems.length > 0) {
      assert.unreachable(
        `${problems.join("\n")}\nRun 'UPDATE_GOLDEN=1 npm test' if the new output is correct, and review 'git diff fixtures/'.`,
      );
    }
  });
}

test.run();
