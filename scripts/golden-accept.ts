// The explicit second step after `UPDATE_GOLDEN=1 npm test` (as TypeScript's baseline-accept):
// every new output written beside an expected one (`<tree>.new/`, `<file>.new` under fixtures/)
// replaces it, then every golden tree is stored once again (an output shared by several trees in
// fixtures/shared/, test/compiler/golden-store.ts). Review `git diff fixtures/` afterwards.
// Run: npm run golden:accept
import { readdirSync, renameSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import {
  acceptNewTrees,
  FIXTURES_DIR,
  NEW_SUFFIX,
  packTrees,
} from "../test/compiler/golden-store.js";
import { allGoldenTrees } from "../test/compiler/golden-trees.js";

const trees = allGoldenTrees();
for (const tree of acceptNewTrees(trees)) {
  console.log(`accepted ${relative(FIXTURES_DIR, tree.dir)}/`);
}

/** The call-flow goldens' single files (`expected.txt.new` and the like). */
function acceptNewFiles(dir: string): void {
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) acceptNewFiles(full);
    else if (entry.endsWith(NEW_SUFFIX)) {
      renameSync(full, full.slice(0, -NEW_SUFFIX.length));
      console.log(`accepted ${relative(FIXTURES_DIR, full.slice(0, -NEW_SUFFIX.length))}`);
    }
  }
}
acceptNewFiles(FIXTURES_DIR);

const { shared, plain } = packTrees(allGoldenTrees());
console.log(
  `golden trees stored once: ${shared} shared outputs in fixtures/shared/, ${plain} files of one tree only`,
);
