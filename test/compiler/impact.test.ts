// Golden cases of plan's impact lines: fixtures/impact/<case>/{before,after}.yaml (an empty
// before is a new org) give exactly expected.txt, the summary line then one line per change.
// UPDATE_GOLDEN=1 rewrites them.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatImpact } from "../../src/cli/lib/plan.js";
import { impactOf } from "../../src/compiler/impact.js";
import { loadOrgSources } from "../../src/model/files.js";
import type { OrgState } from "../../src/model/org-state.js";
import { expectGoldenText, FIXTURES } from "./golden.js";

const DIR = join(FIXTURES, "impact");
const cases = readdirSync(DIR).filter((name) => existsSync(join(DIR, name, "after.yaml")));

function orgs(file: string): OrgState[] {
  const text = readFileSync(file, "utf8");
  if (!/^org:/m.test(text)) return [];
  const loaded = loadOrgSources([{ file, text }], {});
  assert.equal(
    loaded.diagnostics.filter((d) => d.severity === "error"),
    [],
    file,
  );
  return loaded.orgs.map((o) => o.state);
}

for (const name of cases) {
  test(`impact golden: ${name}`, () => {
    const impacts = impactOf(
      orgs(join(DIR, name, "before.yaml")),
      orgs(join(DIR, name, "after.yaml")),
    );
    const text = formatImpact(impacts);
    expectGoldenText(join(DIR, name, "expected.txt"), `${text}\n`);
  });
}

test("impact lines never show a secret, only that it changed", () => {
  const impacts = impactOf(
    orgs(join(DIR, "routing-changes", "before.yaml")),
    orgs(join(DIR, "routing-changes", "after.yaml")),
  );
  const text = JSON.stringify(impacts);
  assert.not.match(text, "old-secret");
  assert.not.match(text, "new-secret");
  assert.match(text, "~ trunk carrier: password changed");
});

test.run();
