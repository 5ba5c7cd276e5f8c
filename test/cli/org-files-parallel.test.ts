// Loading on the worker pool must give exactly what the model's one-thread loader gives: the
// same states, the same diagnostics in the same order, cross-file clashes included.
import { readFile } from "node:fs/promises";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { analyzeSources, startAnalysisPool } from "../../src/cli/lib/analysis-pool.js";
import { loadOrgFileInputs } from "../../src/cli/lib/org-files.js";
import { type LoadResult, loadOrgSources, type OrgSource } from "../../src/model/files.js";
import type { SecretEnvironment } from "../../src/model/secrets.js";

async function loadInParallel(
  input: OrgSource[],
  env: SecretEnvironment,
  pool: { threads?: number; minFiles?: number } = {},
): Promise<LoadResult> {
  const inputs = input.map((source) => ({ ...source, cacheDir: null }));
  const { orgs, diagnostics } = await loadOrgFileInputs(inputs, { env, cache: false, ...pool });
  return { orgs, diagnostics };
}

async function sources(): Promise<OrgSource[]> {
  const acme = await readFile("orgs/acme.yaml", "utf8");
  const globex = await readFile("orgs/globex.yaml", "utf8");
  const list: OrgSource[] = [
    { file: "orgs/acme.yaml", text: acme },
    { file: "orgs/globex.yaml", text: globex },
    // Same org again under another name: id, prefix and DIDs clash across files.
    { file: "orgs/acme-copy.yaml", text: acme },
    // Broken in a file of its own: YAML syntax, and a schema error.
    { file: "orgs/broken.yaml", text: "org: [unclosed\n" },
    {
      file: "orgs/bad-extension.yaml",
      text: globex.replace(/extension: "?(\d+)"?/, "extension: 1x"),
    },
  ];
  // Enough files that every worker gets several.
  for (let i = 0; i < 6; i++) {
    list.push({
      file: `orgs/more-${i}.yaml`,
      text: globex
        .replace(
          /^ {2}id: .*$/m,
          `  id: 9b7e6d5c-4a3b-4c2d-8e1f-0a9b8c7d6e${String(i).padStart(2, "0")}`,
        )
        .replace(/^ {2}slug: .*$/m, `  slug: more-${i}`)
        .replace(/^ {2}context_prefix: .*$/m, `  context_prefix: more${i}_`),
    });
  }
  return list;
}

test("loading in worker threads gives the one-thread result exactly", async () => {
  const input = await sources();
  const env = { ACME_TRUNK_PASSWORD: "from-env" };
  const inThread = loadOrgSources(input, env);
  const parallel = await loadInParallel(input, env, { threads: 3, minFiles: 0 });
  assert.ok(inThread.diagnostics.length >= 4, "the input really has problems");
  assert.ok(inThread.orgs.length >= 8, "and orgs that load");
  assert.equal(parallel, inThread);
});

test("few files load in this thread", async () => {
  const input = (await sources()).slice(0, 2);
  const result = await loadInParallel(input, {});
  assert.equal(result, loadOrgSources(input, {}));
});

test("this thread is one of the pool's: with no worker it analyzes every file, in order", async () => {
  const input = await sources();
  const options = { lint: true, states: true };
  const alone = startAnalysisPool(1);
  const shared = startAnalysisPool(3);
  try {
    const here = await alone.analyze(input, options);
    const spread = await shared.analyze(input, options);
    assert.is(here.length, input.length);
    assert.equal(spread, here);
    // Each answer is at its file's index: a summary names its own file's org.
    const loaded = here.filter((analysis, k) => {
      if (analysis.summary === null) return false;
      assert.is(analysis.summary.id, /^ {2}id: "?([0-9a-f-]+)/m.exec(input[k]!.text)?.[1]);
      return true;
    });
    assert.ok(loaded.length >= 8, "most files load");
  } finally {
    await Promise.all([alone.close(), shared.close()]);
  }
});

test("each analysis is handed over once, at its file's index, as it comes", async () => {
  const input = await sources();
  const options = { lint: false, states: false };
  for (const threads of [1, 3]) {
    const pool = startAnalysisPool(threads);
    try {
      const seen = new Map<number, unknown>();
      const result = await pool.analyze(input, {
        ...options,
        onAnalysis: (index, analysis) => {
          assert.not.ok(seen.has(index), `index ${index} handed over twice`);
          seen.set(index, analysis);
        },
      });
      assert.is(seen.size, input.length);
      for (const [k, analysis] of result.entries()) {
        assert.is(seen.get(k), analysis, `${threads} threads`);
      }
    } finally {
      await pool.close();
    }
  }
  // Analyzed in this thread without a pool (few files): the same, in order.
  const few = input.slice(0, 3);
  const handed: [number, unknown][] = [];
  const result = await analyzeSources(few, {
    ...options,
    onAnalysis: (index, analysis) => handed.push([index, analysis]),
  });
  assert.equal(
    handed.map(([index]) => index),
    [0, 1, 2],
  );
  for (const [index, analysis] of handed) assert.is(analysis, result[index]);
});

test.run();
