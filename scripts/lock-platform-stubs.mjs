// Records Biome's other-platform binaries in package-lock.json.
//
// Why: the npm registry this project installs from (and the CI machine's) serves only the Linux
// glibc builds of @biomejs/cli-*. `npm install` silently skips the optional packages it cannot
// fetch and leaves them out of the lockfile, and `npm ci` then refuses the lockfile as "out of
// sync" ("Missing: @biomejs/cli-darwin-arm64@ from lock file"). An entry carrying only version,
// os, cpu and libc is enough for `npm ci`: it checks the entry, sees the platform does not match
// and never downloads it. `npm install` keeps such entries, so this is needed again only after
// Biome's version changes. Run: `node scripts/lock-platform-stubs.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const biome = lock.packages["node_modules/@biomejs/biome"];
if (!biome) throw new Error("@biomejs/biome is not in package-lock.json");

let added = 0;
for (const [name, version] of Object.entries(biome.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  // Names are @biomejs/cli-<os>-<cpu>[-musl].
  const match = /^@biomejs\/cli-([a-z0-9]+)-([a-z0-9]+)(-musl)?$/.exec(name);
  if (!match) throw new Error(`unexpected Biome platform package name ${name}`);
  const [, os, cpu, musl] = match;
  const entry = { version, cpu: [cpu], dev: true };
  if (os === "linux") entry.libc = [musl ? "musl" : "glibc"];
  Object.assign(entry, {
    license: biome.license,
    optional: true,
    os: [os],
    engines: biome.engines,
  });
  lock.packages[key] = entry;
  added++;
}

// npm writes packages sorted by path; keep that so the file diffs cleanly.
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => a.localeCompare(b, "en")),
);
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform entr${added === 1 ? "y" : "ies"} added`);
