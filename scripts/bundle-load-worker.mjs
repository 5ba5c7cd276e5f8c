// Replaces tsc's dist/cli/lib/load-worker.js with one esbuild bundle of it: the analysis a load
// worker runs (the model, the lint rules, the YAML parser and the org file validator, about 40
// modules) in one ESM file. A cold `validate` of many files starts a worker beside the main
// thread, and the worker's first file waits for its modules: resolving, reading and linking them
// one by one cost the worker about twice what one file costs (docs/gitops.md, issue 30). Runs
// after bundle-packages.mjs in `npm run build` (the vendor bundles are inlined); only
// analysis-pool.ts starts this module, and under tsx (tests, development) workers run src/.
import { rmSync } from "node:fs";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const outfile = `${root}dist/cli/lib/load-worker.js`;

rmSync(`${outfile}.map`, { force: true });
await build({
  entryPoints: [outfile],
  outfile,
  allowOverwrite: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  sourcesContent: false,
  logLevel: "warning",
});
