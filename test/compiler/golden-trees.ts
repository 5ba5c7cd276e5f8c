// Every golden tree of the compilers: each engine case's expected/, realtime/ and edge/ trees and
// each edge case's expected/ (the trees checkCase compares), for the accept step and the
// stored-once test.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { listEdgeCases } from "./edge-cases.js";
import { FIXTURES, listCases } from "./golden.js";
import { type GoldenTree, goldenTree } from "./golden-store.js";

/** The golden trees that exist (or have a `.new` output waiting), in a stable order. */
export function allGoldenTrees(): GoldenTree[] {
  const trees = [
    ...listCases().flatMap((name) =>
      ["expected", "realtime", "edge"].map((tree) => goldenTree(join(FIXTURES, name), tree)),
    ),
    ...listEdgeCases()
      .filter((name) => name.startsWith("edge/"))
      .map((name) => goldenTree(join(FIXTURES, name), "expected")),
  ];
  return trees.filter(
    (tree) => existsSync(tree.dir) || existsSync(tree.manifest) || existsSync(`${tree.dir}.new`),
  );
}
