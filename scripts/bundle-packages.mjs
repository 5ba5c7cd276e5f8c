// Replaces the imports of a few packages in tsc's output with one esbuild bundle of each, under
// dist/vendor/: @oclif/core (about 130 CommonJS files with semver, minimatch, ansis, ...), the
// `yaml` parser (about 70), @sinclair/typebox (200 ES modules, loaded for the org file schema)
// and `diff` (20, for plan's diffs). Resolving, reading and compiling them file by file was a third of the CPU of a
// command that checks one org file (`pbxctl validate one.yaml`: docs/gitops.md, "Where the time
// goes"); one file each costs a fraction. Runs after tsc in `npm run build`; bin/run.js and every
// compiled module (the load workers too) then share one copy of each. Tests (tsx, src/) import
// the packages themselves. A bundled CommonJS package exports the names dist imports from it
// (read from the imports; one it does not have fails the build).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "dist");
const vendor = join(dist, "vendor");
const require = createRequire(join(root, "package.json"));

/** The packages bundled: the file each becomes, and whether it is CommonJS. */
const packages = [
  { name: "@oclif/core", file: "oclif-core.js", commonJs: true },
  { name: "yaml", file: "yaml.js", commonJs: true },
  { name: "@sinclair/typebox", file: "typebox.js", commonJs: false },
  { name: "diff", file: "diff.js", commonJs: false },
];

/** Every .js file under `dir` but the bundles. */
function* scripts(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (path !== vendor) yield* scripts(path);
    } else if (entry.name.endsWith(".js")) yield path;
  }
}

const escaped = (name) => name.replace(/[/.]/g, "\\$&");
const files = [...scripts(dist)].map((path) => ({ path, text: readFileSync(path, "utf8") }));
mkdirSync(vendor, { recursive: true });
const report = [];
for (const pkg of packages) {
  const specifier = new RegExp(`from "${escaped(pkg.name)}";`, "g");
  const importing = files.filter((file) => file.text.includes(`from "${pkg.name}";`));
  const bundle = join(vendor, pkg.file);
  let contents = `export * from "${pkg.name}";\n`;
  if (pkg.commonJs) {
    // A CommonJS package bundled as ESM has no named exports of its own: the names imported.
    // (Reading every name would run the package's lazy getters at start.)
    const names = new Set(["execute"].filter(() => pkg.name === "@oclif/core"));
    const list = new RegExp(`import \\{([^}]*)\\} from "${escaped(pkg.name)}";`, "g");
    for (const file of importing) {
      for (const [, items] of file.text.matchAll(list)) {
        for (const item of items.split(",")) {
          const name = item.trim().split(/\s+as\s+/)[0];
          if (name) names.add(name);
        }
      }
      if (new RegExp(`import [^{][^;]* from "${escaped(pkg.name)}";`).test(file.text)) {
        throw new Error(`${file.path}: only named imports of ${pkg.name} can be bundled`);
      }
    }
    const exported = require(pkg.name);
    for (const name of names) {
      if (!(name in exported)) throw new Error(`${pkg.name} has no export ${name}`);
    }
    contents = `import * as pkg from "${pkg.name}";\nexport const { ${[...names].sort().join(", ")} } = pkg;\n`;
  }
  await build({
    stdin: { contents, resolveDir: root, sourcefile: `${pkg.file}-entry.js` },
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
  for (const file of importing) {
    let path = relative(dirname(file.path), bundle);
    if (!path.startsWith(".")) path = `./${path}`;
    // The same lines: the source maps still hold.
    file.text = file.text.replace(specifier, `from "${path}";`);
    writeFileSync(file.path, file.text);
  }
  report.push(`${pkg.name} (${importing.length} modules)`);
}
// bin/run.js is not compiled: it imports dist/vendor/oclif-core.js itself.
console.log(`dist/vendor: ${report.join(", ")}`);
