// How golden trees are stored: most cases share byte-identical top-level files (the gateway's
// extensions.conf, the include lists), so an output that appears in more than one tree is kept
// once, in fixtures/shared/<sha256 prefix>, and each tree that has it lists it in its manifest
// (fixtures/<case>/<tree>.shared: `<hash>  <path>` lines, sha256sum style). Every other output
// is a plain file under fixtures/<case>/<tree>/. Reading a tree joins both; `packTrees` (the
// accept step, scripts/golden-accept.ts) rewrites every tree so that each output is stored once.
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";

export const FIXTURES_DIR = new URL("../../fixtures/", import.meta.url).pathname;
export const SHARED_DIR = join(FIXTURES_DIR, "shared");
/** Where UPDATE_GOLDEN=1 puts a tree's or a file's new output, beside the accepted one. */
export const NEW_SUFFIX = ".new";

const HEADER =
  "# Outputs of this tree stored once in fixtures/shared/ (same bytes as another tree's).\n" +
  "# Written by `npm run golden:accept`; <sha256 prefix>  <path in the tree>.\n";

/** One golden tree: `fixtures/<case>/<tree>/` and its manifest `fixtures/<case>/<tree>.shared`. */
export interface GoldenTree {
  dir: string;
  manifest: string;
}

/** The tree `tree` of the case directory `caseDir`. */
export function goldenTree(caseDir: string, tree: string): GoldenTree {
  return { dir: join(caseDir, tree), manifest: join(caseDir, `${tree}.shared`) };
}

/** The name an output's bytes are stored under in fixtures/shared/. */
export function contentKey(content: string): string {
  return createHash("sha256").update(content).digest("hex").slice(0, 16);
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((entry) => {
    const full = join(dir, entry);
    return statSync(full).isDirectory() ? listFiles(full) : [full];
  });
}

/** The manifest's entries, path -> key (empty without a manifest). */
export function readManifest(manifest: string): Map<string, string> {
  const entries = new Map<string, string>();
  if (!existsSync(manifest)) return entries;
  for (const line of readFileSync(manifest, "utf8").split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([0-9a-f]{16}) {2}(.+)$/.exec(line);
    if (!match) throw new Error(`${manifest}: not a '<hash>  <path>' line: ${line}`);
    entries.set(match[2]!, match[1]!);
  }
  return entries;
}

/**
 * A tree's expected outputs, path -> text: its plain files and the shared ones its manifest
 * names. Throws when a path is stored both ways or a shared file is missing.
 */
export function readTree(tree: GoldenTree, sharedDir = SHARED_DIR): Map<string, string> {
  const output = new Map<string, string>();
  for (const file of listFiles(tree.dir)) {
    output.set(relative(tree.dir, file), readFileSync(file, "utf8"));
  }
  for (const [path, key] of readManifest(tree.manifest)) {
    if (output.has(path)) throw new Error(`${tree.manifest}: ${path} is also a plain file`);
    const shared = join(sharedDir, key);
    if (!existsSync(shared)) throw new Error(`${tree.manifest}: ${path}: no shared file ${key}`);
    const content = readFileSync(shared, "utf8");
    // Its name is its hash: a shared file edited by hand would silently change every tree.
    if (contentKey(content) !== key) {
      throw new Error(
        `${shared} does not hold the bytes its name says (edited by hand?): restore it, and change outputs only through UPDATE_GOLDEN=1 and golden:accept`,
      );
    }
    output.set(path, content);
  }
  return new Map([...output].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Writes `output` as a plain tree at `dir` (what UPDATE_GOLDEN=1 writes for review). */
export function writePlainTree(dir: string, output: ReadonlyMap<string, string>): void {
  rmSync(dir, { recursive: true, force: true });
  for (const [path, content] of output) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** Replaces each tree that has a `<tree>.new/` beside it by that new output; answers which. */
export function acceptNewTrees(trees: readonly GoldenTree[]): GoldenTree[] {
  const accepted: GoldenTree[] = [];
  for (const tree of trees) {
    const fresh = `${tree.dir}${NEW_SUFFIX}`;
    if (!existsSync(fresh)) continue;
    rmSync(tree.dir, { recursive: true, force: true });
    rmSync(tree.manifest, { force: true });
    renameSync(fresh, tree.dir);
    accepted.push(tree);
  }
  return accepted;
}

/**
 * Stores every tree's outputs once: an output whose bytes appear in two or more places (across
 * all `trees`) goes to fixtures/shared/ and into the tree's manifest, the rest stay plain files;
 * shared files no tree names any more are removed. Idempotent.
 */
export function packTrees(
  trees: readonly GoldenTree[],
  sharedDir = SHARED_DIR,
): { shared: number; plain: number } {
  const contents = trees.map((tree) => readTree(tree, sharedDir));
  const uses = new Map<string, number>();
  for (const output of contents) {
    for (const content of output.values()) {
      const key = contentKey(content);
      uses.set(key, (uses.get(key) ?? 0) + 1);
    }
  }
  const keep = new Set<string>();
  let plain = 0;
  for (const [i, tree] of trees.entries()) {
    const output = contents[i]!;
    const plainOutput = new Map<string, string>();
    const manifest: string[] = [];
    for (const [path, content] of output) {
      const key = contentKey(content);
      if ((uses.get(key) ?? 0) < 2) {
        plainOutput.set(path, content);
        continue;
      }
      keep.add(key);
      manifest.push(`${key}  ${path}\n`);
      mkdirSync(sharedDir, { recursive: true });
      writeFileSync(join(sharedDir, key), content);
    }
    plain += plainOutput.size;
    writePlainTree(tree.dir, plainOutput);
    if (manifest.length > 0) writeFileSync(tree.manifest, `${HEADER}${manifest.join("")}`);
    else rmSync(tree.manifest, { force: true });
  }
  for (const key of existsSync(sharedDir) ? readdirSync(sharedDir) : []) {
    if (!keep.has(key)) rmSync(join(sharedDir, key));
  }
  return { shared: keep.size, plain };
}

/** Outputs stored more than once (the same bytes as plain files in two places): should be none. */
export function unpackedDuplicates(trees: readonly GoldenTree[], sharedDir = SHARED_DIR): string[] {
  const seen = new Map<string, string>();
  const duplicates: string[] = [];
  for (const tree of trees) {
    for (const file of listFiles(tree.dir)) {
      const key = contentKey(readFileSync(file, "utf8"));
      const where = relative(dirname(sharedDir), file);
      const first = seen.get(key);
      if (first) duplicates.push(`${where} has the same bytes as ${first}`);
      else seen.set(key, where);
      if (existsSync(join(sharedDir, key))) {
        duplicates.push(`${where} has the same bytes as shared/${key}`);
      }
    }
  }
  return duplicates;
}

/** Shared files no manifest names (orphans): should be none. */
export function unreferencedShared(trees: readonly GoldenTree[], sharedDir = SHARED_DIR): string[] {
  const named = new Set(trees.flatMap((tree) => [...readManifest(tree.manifest).values()]));
  return (existsSync(sharedDir) ? readdirSync(sharedDir) : []).filter((key) => !named.has(key));
}
