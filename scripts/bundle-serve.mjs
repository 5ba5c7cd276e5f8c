// Replaces tsc's dist/api/serve-modules.js with one esbuild bundle of it: every module `pbxctl
// serve` loads before it listens (ours and the packages', about 1,600 files) in one ESM file.
// Loading them one by one (resolving, reading, compiling each) was most of the start-up's CPU
// (docs/performance.md, start-up). Runs after tsc in `npm run build`; only the serve command
// imports this module, so every other command and every test (tsx, src/) is unaffected.
import { rmSync } from "node:fs";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const outfile = `${root}dist/api/serve-modules.js`;

// Left to Node at run time:
// - better-sqlite3: a native addon;
// - packages only some requests load, by dynamic import(), each with files of its own beside
//   its code: espeak-ng (its .wasm), @google-cloud/text-to-speech (protos read at run time),
//   @viz-js/viz (1.2 MB for the first call-flow picture);
// - pino-pretty (serve --pretty imports it itself).
// pg, pg-cursor, wavefile and asterisk-manager stay out without a word here: src/lazy-package.ts
// requires them by a name esbuild cannot see, on first use.
const external = [
  "better-sqlite3",
  "espeak-ng",
  "@google-cloud/text-to-speech",
  "@viz-js/viz",
  "pino-pretty",
];

rmSync(`${outfile}.map`, { force: true });
await build({
  entryPoints: [`${root}src/api/serve-modules.ts`],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external,
  sourcemap: true,
  sourcesContent: false,
  // CommonJS packages in an ESM bundle call require() for Node's own modules: give them one.
  banner: {
    js: 'import { createRequire as createRequireForBundle } from "node:module"; const require = createRequireForBundle(import.meta.url);',
  },
  logLevel: "warning",
});
