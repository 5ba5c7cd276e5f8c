import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  ACCEPT_HINT,
  caseOutput,
  checkCase,
  compileCase,
  listCases,
  realtimeCaseOutput,
} from "./golden.js";
import { unpackedDuplicates, unreferencedShared } from "./golden-store.js";
import { allGoldenTrees } from "./golden-trees.js";

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
      assert.unreachable(`${problems.join("\n")}\n${ACCEPT_HINT}`);
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
      assert.unreachable(`${problems.join("\n")}\n${ACCEPT_HINT}`);
    }
  });
}

// Shared outputs are stored once (fixtures/shared/, named in each tree's `<tree>.shared`), so a
// change to the gateway's files is one file in review, not seventeen.
test("every golden output is stored once, and every shared one is used", () => {
  const trees = allGoldenTrees();
  const hint = "run 'npm run golden:accept' to store the golden trees once again";
  const duplicates = unpackedDuplicates(trees);
  assert.equal(duplicates, [], `${duplicates.join("\n")}\n${hint}`);
  const orphans = unreferencedShared(trees);
  assert.equal(orphans, [], `fixtures/shared/ files no tree names: ${orphans.join(", ")}; ${hint}`);
});

test.run();
