// Replaces every `import ... from "@oclif/core"` of tsc's output with one esbuild bundle of the
// package, dist/cli/oclif-core.js: @oclif/core is about 130 CommonJS files (with semver,
// minimatch, ansis, ...), and resolving, reading and compiling them one by one was 0.07 s of
// the 0.17 s of CPU every command's start takes (`pbxctl --version`), more than the bundle's
// 0.03 s (docs/gitops.md, "Where the time goes"). Runs after tsc in `npm run build`; bin/run.js
// and every compiled module then share that one copy. Tests (tsx, src/) import the package.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "dist");
const bundle = join(dist, "cli", "oclif-core.js");

// The names pbxctl imports (a CommonJS package bundled as ESM has no named exports of its own;
// reading every name would run the package's lazy getters at start). The build fails when a
// module imports another name.
const names = ["Args", "Command", "Errors", "Flags", "execute", "toConfiguredId"];

await build({
  stdin: {
    contents: `import * as core from "@oclif/core";\nexport const { ${names.join(", ")} } = core;\n`,
    resolveDir: root,
    sourcefile: "oclif-core-entry.js",
  },
  outfile: bundle,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // oclif requires TypeScript only to run commands from .ts sources (ts-node), never here.
  external: ["typescript"],
  // CommonJS code in an ESM bundle calls require() for Node's own modules: give it one.
  banner: {
    js: 'import { createRequire as createRequireForBundle } from "node:module"; const require = createRequireForBundle(import.meta.url);',
  },
  logLevel: "warning",
});

/** Every .js file under `dir`. */
function* scripts(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* scripts(path);
    else if (entry.name.endsWith(".js") && path !== bundle) yield path;
  }
}

const specifier = /from "@oclif\/core";/g;
const imports = /import \{([^}]*)\} from "@oclif\/core";/g;
let rewritten = 0;
for (const file of scripts(dist)) {
  const text = readFileSync(file, "utf8");
  if (!specifier.test(text)) continue;
  for (const [, list] of text.matchAll(imports)) {
    for (const name of list.split(",").map((item) => item.trim().split(/\s+as\s+/)[0])) {
      if (name && !names.includes(name)) {
        throw new Error(
          `${file} imports ${name} from @oclif/core: add it to scripts/bundle-oclif.mjs`,
        );
      }
    }
  }
  let path = relative(dirname(file), bundle);
  if (!path.startsWith(".")) path = `./${path}`;
  // Same length of lines: the source maps still hold.
  writeFileSync(file, text.replace(specifier, `from "${path}";`));
  rewritten++;
}
console.log(`dist/cli/oclif-core.js: @oclif/core bundled, imported by ${rewritten} modules`);
