// The cache of analyzed org files, `.pbxctl/cache/` beside them (docs/gitops.md, "The cache").
// An entry is keyed by the SHA-256 of a file's text and lives in a directory named by the
// running pbxctl's version key (its version and a hash of the code that analyzes files), so a
// changed file, or another pbxctl, never finds an entry it did not write. An entry holds what
// does not depend on the environment (every problem, placed; the secrets the file names; the
// lint findings; the summary cross-file checks run over), never a secret, never the parsed
// state. All entries of a directory are one file (`analyses.pack`), replaced atomically; an
// entry that does not read back as one is ignored and analyzed again, and a cache that cannot
// be written is skipped. Two commands writing at once lose at most the other's new entries.
//
// The pack (org-file-pack.ts) is laid out so that a run which changed one file of 10,000 reads
// little of it: what the checks across files compare of each entry (SummaryKeys) and the stat
// index are read by every run; an entry's whole analysis only when it has something to report
// (not "plain") or a clash must be placed. A corrupted entry (its check fails) is a missing one.
//
// Beside the entries, the pack holds a stat index, as git's index does: each file's size,
// mtime, ctime and inode with the hash of the text they were read with, so a warm run stats
// 10,000 files instead of reading and hashing 80 MB. The hash stays the truth: a row is used
// only when all four match, and a file is recorded only when it last changed well before the
// run began ("racy git": a file changed again within the file system's time stamp granularity
// of the read could keep its size and time stamps, so a recent file is hashed until it is old).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, type Stats } from "node:fs";
import { open, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { extname, join } from "node:path";
import { TEMP_MARK, writeFileAtomic } from "../../atomic-files.js";
import type { OrgFileAnalysis } from "../../model/org-file-result.js";
import { type SummaryKeys, summaryKeys } from "../../model/org-summary.js";
import { ClaimsIndex } from "./claims-index.js";
import {
  APPEND_LIMIT_RECORDS,
  APPEND_LIMIT_SHARE,
  DecodedPack,
  encodePack,
  encodeRecord,
  entryCheck,
  type KeysRow,
  keysOfRow,
  keysRow,
  PACK_FORMAT,
  type PackEntry,
  type StatRow,
} from "./org-file-pack.js";

export type { StatRow } from "./org-file-pack.js";

/** Where the cache is kept, relative to the directory of the org files. */
export const CACHE_DIR = join(".pbxctl", "cache");

/** The pack's file name in its version's directory. */
export const PACK = "analyses.pack";

/**
 * How long before a run a file must have last changed for its stat to be recorded: above the
 * coarsest time stamp granularity of common file systems (FAT: 2 s; ext3, HFS+: 1 s) and a
 * small offset between the file system's clock and this machine's.
 */
export const RACY_WINDOW_MS = 3000;

/** What the stat index compares of a file (a `fs.Stats` has them). */
export type FileStamp = Pick<Stats, "size" | "mtimeMs" | "ctimeMs" | "ino">;

/** An analysis as cached: without its state; `lint` says whether `extra` holds lint findings. */
export type CachedAnalysis = Omit<OrgFileAnalysis, "state"> & { lint: boolean };

/** The cache key of a file's text (as read, or decoded: the same UTF-8 bytes). */
export function contentHash(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}

let runningVersion: string | undefined;

/**
 * The version key of the running pbxctl: its package version and the hash of every module
 * that decides what an analysis holds (the model, the compiler's lint, the analysis and this
 * cache, and the YAML parser they read files with: its bundle in a build, its version when run
 * from source), so a build with any rule or parser changed never trusts an older entry.
 */
export function cacheVersion(): string {
  if (runningVersion !== undefined) return runningVersion;
  const root = new URL("../../", import.meta.url);
  const ext = extname(new URL(import.meta.url).pathname);
  const hash = createHash("sha256");
  const pkg = JSON.parse(readFileSync(new URL("../package.json", root), "utf8")) as {
    version: string;
  };
  hash.update(`pbxctl ${pkg.version} format ${PACK_FORMAT}\n`);
  const code = [
    ...["model", "compiler"].flatMap((dir) =>
      readdirSync(new URL(`${dir}/`, root))
        .filter((name) => name.endsWith(ext))
        .sort()
        .map((name) => `${dir}/${name}`),
    ),
    `cli/lib/org-file-analysis${ext}`,
    `cli/lib/org-file-cache${ext}`,
    `cli/lib/org-file-pack${ext}`,
    `cli/lib/claims-index${ext}`,
  ];
  if (existsSync(new URL("vendor/yaml.js", root))) code.push("vendor/yaml.js");
  else hash.update(`yaml ${createRequire(import.meta.url)("yaml/package.json").version}\n`);
  for (const path of code)
    hash
      .update(path)
      .update("\0")
      .update(readFileSync(new URL(path, root)));
  runningVersion = hash.digest("hex").slice(0, 20);
  return runningVersion;
}

/**
 * A cached analysis as found: whether it is plain and has lint findings, the keys the checks
 * across files compare, and the whole analysis, read from the pack when first asked for (at
 * once when the entry is not plain).
 */
export class CachedEntry {
  private parsed: CachedAnalysis | undefined;

  constructor(
    readonly lint: boolean,
    /** Nothing but a summary: no problem, no secret reference, no lint finding. */
    readonly plain: boolean,
    private readonly keysRow: () => KeysRow | null,
    /** The entry with its bytes, checked (undefined: they are not as written). */
    private readonly stored: () => PackEntry | undefined,
    /** Its analysis, when it was just made. */
    parsed?: CachedAnalysis,
  ) {
    this.parsed = parsed;
  }

  /** What the checks across files compare (null: the org did not load). */
  get keys(): SummaryKeys | null {
    const row = this.keysRow();
    return row && keysOfRow(row);
  }

  /** The whole analysis; undefined when its bytes do not read back as one (corrupted). */
  analysis(): CachedAnalysis | undefined {
    if (this.parsed) return this.parsed;
    const stored = this.stored();
    if (!stored) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(textOf(stored.bytes));
    } catch {
      return undefined;
    }
    if (!isCachedAnalysis(value) || value.lint !== this.lint) return undefined;
    this.parsed = value;
    return value;
  }

  /** The entry as written again (undefined: its bytes are not as written). */
  get packed(): PackEntry | undefined {
    return this.stored();
  }
}

/**
 * A fresh analysis's entry, its check made now (as the analysis comes, while other threads
 * still parse: not when the pack is written, after the last file).
 */
function freshEntry(hash: string, analysis: CachedAnalysis): CachedEntry {
  const packed = packEntry(analysis);
  packed.check = entryCheck(hash, packed);
  return new CachedEntry(
    packed.lint,
    packed.plain,
    () => packed.keys,
    () => packed,
    analysis,
  );
}

/** Bytes of the pack as text (a view, not a copy). */
function textOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}

/** The pack entry of an analysis. */
function packEntry(analysis: CachedAnalysis): PackEntry {
  const { before, after, secrets, rejected, extra, summary } = analysis;
  const plain =
    summary !== null &&
    before.length + after.length + secrets.length + rejected.length + extra.length === 0;
  return {
    lint: analysis.lint,
    plain,
    keys: summary === null ? null : keysRow(summaryKeys(summary)),
    bytes: Buffer.from(JSON.stringify(analysis)),
  };
}

/**
 * The entries and stat index of the pack at `file`, each entry's analysis parsed (one that does
 * not read back as JSON is kept as its text; one whose check fails is left out): for tests and
 * for looking into a cache.
 */
export function readPackFile(
  file: string,
  version: string,
): { entries: Record<string, unknown>; files: Record<string, StatRow> } | null {
  const pack = DecodedPack.decode(readFileSync(file), version);
  if (!pack) return null;
  const entries: Record<string, unknown> = {};
  for (const hash of pack.hashes()) {
    const entry = pack.entry(hash);
    if (!entry) continue;
    const text = textOf(entry.bytes);
    try {
      entries[hash] = JSON.parse(text);
    } catch {
      entries[hash] = text;
    }
  }
  return { entries, files: Object.fromEntries(pack.files) };
}

/**
 * Writes a pack of these entries (any value: one that is not an analysis is written as it is,
 * and read back as a corrupted entry) and stat rows: for tests.
 */
export async function writePackFile(
  file: string,
  version: string,
  pack: { entries: Record<string, unknown>; files: Record<string, StatRow> },
): Promise<void> {
  const entries = new Map<string, PackEntry>();
  for (const [hash, value] of Object.entries(pack.entries)) {
    entries.set(
      hash,
      isCachedAnalysis(value)
        ? packEntry(value)
        : { lint: false, plain: false, keys: null, bytes: Buffer.from(JSON.stringify(value)) },
    );
  }
  await writeFileAtomic(file, encodePack(version, entries, new Map(Object.entries(pack.files))));
}

/** The cached analyses of the org files of one directory, for one pbxctl version. */
export class OrgFileCache {
  private readonly used = new Map<string, CachedEntry>();
  /** Entries analyzed this run (what an appended record holds). */
  private readonly added = new Map<string, PackEntry>();
  /** Entries of the pack found corrupted this run (never written again). */
  private readonly dropped = new Set<string>();
  /** The stat index rows of the files seen this run (null: not to be recorded). */
  private readonly seen = new Map<string, StatRow | null>();
  private changed = false;

  private constructor(
    private readonly root: string,
    private readonly version: string,
    /** The pack as read (null: missing, unreadable or of another version). */
    private readonly pack: DecodedPack | null,
  ) {}

  /** Whether the stored file was missing, unreadable or of another version. */
  get empty(): boolean {
    return this.pack === null;
  }

  /** The cache of the org files in `dir` (empty when there is none or it cannot be read). */
  static async open(dir: string, version: string = cacheVersion()): Promise<OrgFileCache> {
    const root = join(dir, CACHE_DIR);
    let pack: DecodedPack | null = null;
    try {
      pack = DecodedPack.open(join(root, version, PACK), version);
    } catch {
      // Unreadable: every file is analyzed and the pack written.
    }
    const cache = new OrgFileCache(root, version, pack);
    cache.changed = pack === null;
    return cache;
  }

  /** The claims index kept beside the pack (claims-index.ts). */
  claimsIndex(): Promise<ClaimsIndex> {
    return ClaimsIndex.open(join(this.root, this.version), this.version);
  }

  /** The entry of a text's hash, if there is a sound one (with lint findings if `lint`). */
  get(hash: string, lint: boolean): CachedEntry | undefined {
    let entry = this.used.get(hash);
    if (!entry) {
      if (this.dropped.has(hash)) return undefined;
      const pack = this.pack;
      const flags = pack?.flags(hash);
      entry =
        pack && flags
          ? new CachedEntry(
              flags.lint,
              flags.plain,
              () => pack.keys(hash),
              () => pack.entry(hash),
            )
          : undefined;
      // Not plain: its problems or secrets are needed now, so it is read (and its shape checked).
      if (!entry || (!entry.plain && entry.analysis() === undefined)) {
        if (pack?.has(hash)) {
          // Corrupted: ignored, and replaced by the next put.
          this.dropped.add(hash);
          this.changed = true;
        }
        return undefined;
      }
      this.used.set(hash, entry);
    }
    return lint && !entry.lint ? undefined : entry;
  }

  /**
   * The hash of the text of `name` (a file in the cache's directory) as last recorded, if its
   * stat matches the row exactly; otherwise the file must be read and hashed.
   */
  knownHash(name: string, stamp: FileStamp): string | undefined {
    const row = this.pack?.files.get(name);
    if (row === undefined) return undefined;
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
    const before = this.pack?.files.get(name);
    if (row === null ? before !== undefined : before?.join("\n") !== row.join("\n")) {
      this.changed = true;
    }
  }

  /**
   * Forgets the entry of `hash`, found corrupted after `get` gave it (its bytes, read late, are
   * not as written): it is analyzed again, and the pack is written anew without the bytes.
   */
  drop(hash: string): void {
    this.used.delete(hash);
    this.dropped.add(hash);
    this.changed = true;
  }

  /** Records a text's analysis (its state is not kept). */
  put(hash: string, analysis: OrgFileAnalysis, lint: boolean): void {
    const { state: _state, ...rest } = analysis;
    const cached: CachedAnalysis = { ...rest, lint };
    const entry = freshEntry(hash, cached);
    this.used.set(hash, entry);
    this.added.set(hash, entry.packed!);
    this.changed = true;
  }

  /**
   * Appends what this run added (entries, changed stat rows) to the pack as one synced record;
   * false when the pack must be written anew instead: missing or corrupted (a failed check, a
   * dropped entry, a torn record) or its records grown past their limits.
   */
  private async append(): Promise<boolean> {
    const pack = this.pack;
    if (pack === null || !pack.intact || !pack.appended.sound || this.dropped.size > 0) {
      return false;
    }
    if (
      pack.appended.records + 1 > APPEND_LIMIT_RECORDS ||
      pack.appended.bytes > pack.appended.base * APPEND_LIMIT_SHARE
    ) {
      return false;
    }
    const files = new Map<string, StatRow | null>();
    for (const [name, row] of this.seen) {
      const before = pack.files.get(name);
      if (row === null) {
        if (before !== undefined) files.set(name, null);
      } else if (before?.join("\n") !== row.join("\n")) {
        files.set(name, row);
      }
    }
    if (this.added.size === 0 && files.size === 0) return true;
    const handle = await open(join(this.root, this.version, PACK), "a");
    try {
      await handle.write(encodeRecord(this.added, files));
      await handle.sync();
    } finally {
      await handle.close();
    }
    return true;
  }

  /**
   * Writes the entries used or added by this run, and as many others as those (files of other
   * revisions, a subset checked), if anything changed; removes other versions' caches. The
   * entries read from the pack are written back as the bytes they were read as.
   */
  async save(): Promise<void> {
    if (!this.changed) return;
    try {
      if (await this.append()) {
        this.changed = false;
        return;
      }
    } catch {
      // Appending failed (a read-only checkout): writing it anew fails too, or works.
    }
    // Every entry kept is read from the body (and checked): all of it at once.
    this.pack?.loadBody();
    const entries = new Map<string, PackEntry>();
    for (const [hash, entry] of [...this.used].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const packed = entry.packed;
      if (packed) entries.set(hash, packed);
    }
    let room = this.used.size;
    for (const hash of this.pack?.hashes() ?? []) {
      if (room === 0) break;
      if (entries.has(hash) || this.dropped.has(hash)) continue;
      const entry = this.pack?.entry(hash);
      if (!entry) continue;
      entries.set(hash, entry);
      room--;
    }
    // Rows of the files seen this run, and the other rows whose text still has an entry.
    const files = new Map<string, StatRow>();
    for (const [name, row] of this.seen)
      if (row !== null && entries.has(row[4])) files.set(name, row);
    for (const [name, row] of this.pack?.files ?? []) {
      if (!this.seen.has(name) && entries.has(row[4])) files.set(name, row);
    }
    try {
      await writeFileAtomic(join(this.root, ".gitignore"), "# pbxctl's cache: safe to delete\n*\n");
      await writeFileAtomic(
        join(this.root, this.version, PACK),
        encodePack(this.version, entries, files),
      );
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
