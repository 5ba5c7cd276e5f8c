// The cache of analyzed org files, `.pbxctl/cache/` beside them (docs/gitops.md, "The cache").
// An entry is keyed by the SHA-256 of a file's text and lives in a directory named by the
// running pbxctl's version key (its version and a hash of the code that analyzes files), so a
// changed file, or another pbxctl, never finds an entry it did not write. An entry holds what
// does not depend on the environment (every problem, placed; the secrets the file names; the
// lint findings; the summary cross-file checks run over), never a secret, never the parsed
// state. All entries of a directory are one file (`analyses.json`): reading one file is what
// makes a warm check of 10,000 orgs fast. It is replaced atomically; an entry that does not
// read back as one is ignored and analyzed again, and a cache that cannot be written is
// skipped. Two commands writing at once lose at most the other's new entries.
//
// Beside the entries, the pack holds a stat index, as git's index does: each file's size,
// mtime, ctime and inode with the hash of the text they were read with, so a warm run stats
// 10,000 files instead of reading and hashing 80 MB. The hash stays the truth: a row is used
// only when all four match, and a file is recorded only when it last changed well before the
// run began ("racy git": a file changed again within the file system's time stamp granularity
// of the read could keep its size and time stamps, so a recent file is hashed until it is old).
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, type Stats } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { extname, join } from "node:path";
import { TEMP_MARK, writeFileAtomic } from "../../atomic-files.js";
import type { OrgFileAnalysis } from "../../model/org-file-result.js";

/** Where the cache is kept, relative to the directory of the org files. */
export const CACHE_DIR = join(".pbxctl", "cache");

/** Bump when the shape of `analyses.json` changes. */
const FORMAT = 2;
const PACK = "analyses.json";

/**
 * How long before a run a file must have last changed for its stat to be recorded: above the
 * coarsest time stamp granularity of common file systems (FAT: 2 s; ext3, HFS+: 1 s) and a
 * small offset between the file system's clock and this machine's.
 */
export const RACY_WINDOW_MS = 3000;

/** What the stat index compares of a file (a `fs.Stats` has them). */
export type FileStamp = Pick<Stats, "size" | "mtimeMs" | "ctimeMs" | "ino">;

/** A stat index row: size, mtime (ms), ctime (ms), inode, the hash of the text. */
type StatRow = [number, number, number, number, string];

/** An analysis as cached: without its state; `lint` says whether `extra` holds lint findings. */
export type CachedAnalysis = Omit<OrgFileAnalysis, "state"> & { lint: boolean };

interface Pack {
  format: number;
  version: string;
  entries: Record<string, unknown>;
  /** The stat index: file name (in the directory) -> its row. */
  files: Record<string, unknown>;
}

/** The cache key of a file's text (as read, or decoded: the same UTF-8 bytes). */
export function contentHash(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}

let runningVersion: string | undefined;

/**
 * The version key of the running pbxctl: its package version and the hash of every module
 * that decides what an analysis holds (the model, the compiler's lint, the analysis and this
 * cache), so a build with any rule changed never trusts an older entry.
 */
export function cacheVersion(): string {
  if (runningVersion !== undefined) return runningVersion;
  const root = new URL("../../", import.meta.url);
  const ext = extname(new URL(import.meta.url).pathname);
  const hash = createHash("sha256");
  const pkg = JSON.parse(readFileSync(new URL("../package.json", root), "utf8")) as {
    version: string;
  };
  hash.update(`pbxctl ${pkg.version} format ${FORMAT}\n`);
  const code = [
    ...["model", "compiler"].flatMap((dir) =>
      readdirSync(new URL(`${dir}/`, root))
        .filter((name) => name.endsWith(ext))
        .sort()
        .map((name) => `${dir}/${name}`),
    ),
    `cli/lib/org-file-analysis${ext}`,
    `cli/lib/org-file-cache${ext}`,
  ];
  for (const path of code)
    hash
      .update(path)
      .update("\0")
      .update(readFileSync(new URL(path, root)));
  runningVersion = hash.digest("hex").slice(0, 20);
  return runningVersion;
}

/** The cached analyses of the org files of one directory, for one pbxctl version. */
export class OrgFileCache {
  private readonly used = new Map<string, CachedAnalysis>();
  /** The stat index rows of the files seen this run (null: not to be recorded). */
  private readonly seen = new Map<string, StatRow | null>();
  private changed = false;

  private constructor(
    private readonly root: string,
    private readonly version: string,
    private readonly stored: Record<string, unknown>,
    private readonly storedFiles: Record<string, unknown>,
    /** Whether the stored file was missing, unreadable or of another version. */
    readonly empty: boolean,
  ) {}

  /** The cache of the org files in `dir` (empty when there is none or it cannot be read). */
  static async open(dir: string, version: string = cacheVersion()): Promise<OrgFileCache> {
    const root = join(dir, CACHE_DIR);
    let stored: Record<string, unknown> | null = null;
    let storedFiles: Record<string, unknown> = {};
    try {
      const pack = JSON.parse(await readFile(join(root, version, PACK), "utf8")) as Pack;
      if (pack.format === FORMAT && pack.version === version && isRecord(pack.entries)) {
        stored = pack.entries;
        if (isRecord(pack.files)) storedFiles = pack.files;
      }
    } catch {
      // Missing or not JSON: every file is analyzed again and the file rewritten.
    }
    const cache = new OrgFileCache(root, version, stored ?? {}, storedFiles, stored === null);
    cache.changed = stored === null;
    return cache;
  }

  /** The entry of a text's hash, if there is a sound one (with lint findings if `lint`). */
  get(hash: string, lint: boolean): CachedAnalysis | undefined {
    const entry = this.used.get(hash) ?? this.stored[hash];
    if (entry === undefined) return undefined;
    if (!isCachedAnalysis(entry)) {
      // Corrupted: ignored, and replaced by the next put.
      delete this.stored[hash];
      this.changed = true;
      return undefined;
    }
    if (lint && !entry.lint) return undefined;
    this.used.set(hash, entry);
    return entry;
  }

  /**
   * The hash of the text of `name` (a file in the cache's directory) as last recorded, if its
   * stat matches the row exactly; otherwise the file must be read and hashed.
   */
  knownHash(name: string, stamp: FileStamp): string | undefined {
    const row = this.storedFiles[name];
    if (!isStatRow(row)) return undefined;
    const [size, mtimeMs, ctimeMs, ino, hash] = row;
    if (
      size !== stamp.size ||
      mtimeMs !== stamp.mtimeMs ||
      ctimeMs !== stamp.ctimeMs ||
      ino !== stamp.ino
    ) {
      return undefined;
    }
    this.seen.set(name, row);
    return hash;
  }

  /**
   * Records that `name`, with this stat (taken before it was read), has the text of `hash`;
   * not when it changed within RACY_WINDOW_MS of `runStart` (its stat then proves nothing).
   */
  recordStat(name: string, stamp: FileStamp, hash: string, runStart: number): void {
    const settled = Math.max(stamp.mtimeMs, stamp.ctimeMs) <= runStart - RACY_WINDOW_MS;
    const row: StatRow | null = settled
      ? [stamp.size, stamp.mtimeMs, stamp.ctimeMs, stamp.ino, hash]
      : null;
    this.seen.set(name, row);
    const before = this.storedFiles[name];
    if (row === null ? before !== undefined : JSON.stringify(before) !== JSON.stringify(row)) {
      this.changed = true;
    }
  }

  /** Records a text's analysis (its state is not kept). */
  put(hash: string, analysis: OrgFileAnalysis, lint: boolean): void {
    const { state: _state, ...rest } = analysis;
    this.used.set(hash, { ...rest, lint });
    this.changed = true;
  }

  /**
   * Writes the entries used or added by this run, and as many others as those (files of other
   * revisions, a subset checked), if anything changed; removes other versions' caches.
   */
  async save(): Promise<void> {
    if (!this.changed) return;
    const entries: Record<string, unknown> = {};
    for (const [hash, entry] of [...this.used].sort(([a], [b]) => (a < b ? -1 : 1))) {
      entries[hash] = entry;
    }
    let room = this.used.size;
    for (const [hash, entry] of Object.entries(this.stored)) {
      if (room === 0) break;
      if (hash in entries || !isCachedAnalysis(entry)) continue;
      entries[hash] = entry;
      room--;
    }
    // Rows of the files seen this run, and the other rows whose text still has an entry.
    const files: Record<string, StatRow> = {};
    for (const [name, row] of this.seen) if (row !== null && row[4] in entries) files[name] = row;
    for (const [name, row] of Object.entries(this.storedFiles)) {
      if (!this.seen.has(name) && isStatRow(row) && row[4] in entries) files[name] = row;
    }
    const pack: Pack = { format: FORMAT, version: this.version, entries, files };
    try {
      await writeFileAtomic(join(this.root, ".gitignore"), "# pbxctl's cache: safe to delete\n*\n");
      await writeFileAtomic(join(this.root, this.version, PACK), JSON.stringify(pack));
      for (const name of readdirSync(this.root)) {
        // Another command's write in progress (a temp file) is left alone.
        if (name !== this.version && name !== ".gitignore" && !name.startsWith(TEMP_MARK)) {
          await rm(join(this.root, name), { recursive: true, force: true });
        }
      }
      this.changed = false;
    } catch {
      // A cache that cannot be written (read-only checkout) only costs the next run its speed.
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isString = (value: unknown) => typeof value === "string";
const isStatRow = (value: unknown): value is StatRow =>
  Array.isArray(value) &&
  value.length === 5 &&
  value.slice(0, 4).every((n) => typeof n === "number") &&
  isString(value[4]);
const isPosition = (value: unknown) =>
  isRecord(value) && Number.isInteger(value.line) && Number.isInteger(value.col);
const isDiagnostic = (value: unknown) =>
  isPosition(value) &&
  isRecord(value) &&
  (value.severity === "error" || value.severity === "warning") &&
  isString(value.path) &&
  isString(value.message);
const isClaim = (value: unknown) =>
  isRecord(value) && isString(value.path) && isString(value.value) && isPosition(value.at);
const listOf = (value: unknown, check: (item: unknown) => boolean) =>
  Array.isArray(value) && value.every(check);

/** Whether a stored entry has the shape this version writes (anything else is corrupt). */
function isCachedAnalysis(value: unknown): value is CachedAnalysis {
  if (!isRecord(value) || typeof value.lint !== "boolean") return false;
  if (!listOf(value.before, isDiagnostic) || !listOf(value.after, isDiagnostic)) return false;
  if (!listOf(value.extra, isDiagnostic) || !listOf(value.rejected, isString)) return false;
  const secret = (item: unknown) =>
    isRecord(item) &&
    isString(item.path) &&
    isPosition(item.at) &&
    (isDiagnostic({ ...(item.problem as object), line: 1, col: 1 }) ||
      (isString(item.variable) && isRecord(item.target)));
  if (!listOf(value.secrets, secret)) return false;
  const summary = value.summary;
  if (summary === null) return true;
  return (
    isRecord(summary) &&
    isString(summary.id) &&
    isString(summary.context_prefix) &&
    (summary.slug === null || isString(summary.slug)) &&
    listOf(summary.dids, (did) => isClaim(did) && isRecord(did) && isString(did.key)) &&
    listOf(summary.trunk_matches, isClaim) &&
    (summary.gateway === null || isRecord(summary.gateway)) &&
    isRecord(summary.at) &&
    isPosition(summary.at.id) &&
    isPosition(summary.at.context_prefix) &&
    isPosition(summary.at.slug)
  );
}
