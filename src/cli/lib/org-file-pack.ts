// The on-disk layout of the org file cache (org-file-cache.ts): one file per directory and
// version, `analyses.pack`, laid out so that a run which changed one file of 10,000 parses
// little of it. Three lines of JSON, then the body:
//
//   1. {"format", "version", "check"}: `check` is the SHA-256 of everything after this line;
//   2. the entries, one row each: the text's hash, the length of its analysis in the body, the
//      entry's own check, lint, plain, and what the checks across files compare (id, context
//      prefix, slug, DID keys, trunk match values: SummaryKeys; null when the org did not load);
//   3. the stat index, one row per file: name, size, mtime, ctime, inode, its entry's index;
//
// then every entry's analysis as JSON, in the entries' order. The rows are what every run
// needs (10,000 summaries' keys and stat rows); an analysis is parsed only when its entry is
// not plain (it has a problem, a secret reference or a lint finding to report) or when a clash
// must be placed or the gateway rebuilt. Rewriting the pack copies the body's bytes.
//
// Corruption: when the pack's check holds, every row and byte is as written. When it does not,
// each entry is used only if its own check (of its hash, fields and bytes) holds, and the stat
// index is dropped (the files are read and hashed again): a corrupted entry is a missing one.
import { hash as digest } from "node:crypto";
import type { SummaryKeys } from "../../model/org-summary.js";

/** Bump when the layout changes. */
export const PACK_FORMAT = 3;

/** SummaryKeys as a row holds them: id, context prefix, slug, DID keys, match values. */
export type KeysRow = [string, string, string | null, string[], string[]];

/** A stat index row: size, mtime (ms), ctime (ms), inode, the hash of the text. */
export type StatRow = [number, number, number, number, string];

/** An entry as written: its row's fields and its analysis's bytes (JSON). */
export interface PackEntry {
  lint: boolean;
  /** Nothing but a summary: no problem, no secret reference, no lint finding. */
  plain: boolean;
  keys: KeysRow | null;
  bytes: Uint8Array;
  /** Its check, when read back (kept: the bytes are the same). */
  check?: string;
}

/** An entry row: hash, length, check, lint, plain, keys. */
type EntryRow = [string, number, string, boolean, boolean, KeysRow | null];
/** A stat row as stored: name, size, mtime, ctime, inode, entry index. */
type FileRow = [string, number, number, number, number, number];

export function keysRow(keys: SummaryKeys): KeysRow {
  return [keys.id, keys.context_prefix, keys.slug, keys.dids, keys.trunk_matches];
}

export function keysOfRow([id, context_prefix, slug, dids, trunk_matches]: KeysRow): SummaryKeys {
  return { id, context_prefix, slug, dids, trunk_matches };
}

/** An entry's own check: its hash, its row's fields and its bytes. */
function entryCheck(hash: string, entry: PackEntry): string {
  const fields = JSON.stringify([hash, entry.lint, entry.plain, entry.keys]);
  return digest("sha1", Buffer.concat([Buffer.from(`${fields}\n`), entry.bytes]), "hex");
}

/** A pack read back: its entries found by hash, its stat index by name. */
export class DecodedPack {
  private constructor(
    private readonly rows: readonly unknown[],
    private readonly offsets: readonly number[],
    private readonly byHash: ReadonlyMap<string, number>,
    private readonly body: Buffer,
    /** Whether the whole pack's check held (every row and byte as written). */
    private readonly intact: boolean,
    /** The stat index (empty when the pack's check did not hold). */
    readonly files: ReadonlyMap<string, StatRow>,
  ) {}

  /** The pack's bytes, or null when they are not a pack of this format and version. */
  static decode(bytes: Buffer, version: string): DecodedPack | null {
    const lines: number[] = [];
    for (let at = 0; lines.length < 3; at++) {
      at = bytes.indexOf(10, at);
      if (at < 0) return null;
      lines.push(at);
    }
    const [first, second, third] = lines as [number, number, number];
    try {
      const head = JSON.parse(bytes.toString("utf8", 0, first)) as Record<string, unknown>;
      if (head.format !== PACK_FORMAT || head.version !== version) return null;
      const intact = head.check === digest("sha256", bytes.subarray(first + 1), "hex");
      const rows: unknown = JSON.parse(bytes.toString("utf8", first + 1, second));
      const fileRows: unknown = intact ? JSON.parse(bytes.toString("utf8", second + 1, third)) : [];
      if (!Array.isArray(rows) || !Array.isArray(fileRows)) return null;
      const body = bytes.subarray(third + 1);
      const offsets: number[] = new Array(rows.length);
      const byHash = new Map<string, number>();
      let offset = 0;
      for (const [index, row] of rows.entries()) {
        // Lengths place every later entry: one that is not a length makes the body unreadable.
        const length = Array.isArray(row) ? row[1] : undefined;
        if (!Number.isInteger(length) || length < 0) return null;
        offsets[index] = offset;
        offset += length;
        if (typeof row[0] === "string") byHash.set(row[0], index);
      }
      if (offset > body.length) return null;
      const files = new Map<string, StatRow>();
      for (const row of fileRows) {
        if (!isFileRow(row)) continue;
        const hash = (rows[row[5]] as unknown[] | undefined)?.[0];
        if (typeof hash === "string") files.set(row[0], [row[1], row[2], row[3], row[4], hash]);
      }
      return new DecodedPack(rows, offsets, byHash, body, intact, files);
    } catch {
      return null;
    }
  }

  get size(): number {
    return this.rows.length;
  }

  /** The hashes of the entries, in the pack's order. */
  hashes(): IterableIterator<string> {
    return this.byHash.keys();
  }

  /** Whether the pack has a row for `hash` (sound or not). */
  has(hash: string): boolean {
    return this.byHash.has(hash);
  }

  /** The entry of `hash`, if there is one and it is as it was written. */
  entry(hash: string): PackEntry | undefined {
    const index = this.byHash.get(hash);
    if (index === undefined) return undefined;
    const row = this.rows[index];
    if (!isEntryRow(row)) return undefined;
    const [, length, check, lint, plain, keys] = row;
    const offset = this.offsets[index]!;
    const bytes = this.body.subarray(offset, offset + length);
    const entry: PackEntry = { lint, plain, keys, bytes, check };
    if (!this.intact && entryCheck(hash, entry) !== check) return undefined;
    return entry;
  }
}

/** The pack of these entries (by hash, in this order) and stat rows. */
export function encodePack(
  version: string,
  entries: ReadonlyMap<string, PackEntry>,
  files: ReadonlyMap<string, StatRow>,
): Buffer {
  const rows: EntryRow[] = [];
  const indexOf = new Map<string, number>();
  for (const [hash, entry] of entries) {
    indexOf.set(hash, rows.length);
    rows.push([
      hash,
      entry.bytes.length,
      entry.check ?? entryCheck(hash, entry),
      entry.lint,
      entry.plain,
      entry.keys,
    ]);
  }
  const fileRows: FileRow[] = [];
  for (const [name, [size, mtimeMs, ctimeMs, ino, hash]] of files) {
    const index = indexOf.get(hash);
    if (index !== undefined) fileRows.push([name, size, mtimeMs, ctimeMs, ino, index]);
  }
  const rest = Buffer.concat([
    Buffer.from(`${JSON.stringify(rows)}\n${JSON.stringify(fileRows)}\n`),
    ...[...entries.values()].map((entry) => entry.bytes),
  ]);
  const head = { format: PACK_FORMAT, version, check: digest("sha256", rest, "hex") };
  return Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`), rest]);
}

const isString = (value: unknown): value is string => typeof value === "string";
const isStringList = (value: unknown) => Array.isArray(value) && value.every(isString);
const isKeysRow = (value: unknown) =>
  Array.isArray(value) &&
  value.length === 5 &&
  isString(value[0]) &&
  isString(value[1]) &&
  (value[2] === null || isString(value[2])) &&
  isStringList(value[3]) &&
  isStringList(value[4]);
const isEntryRow = (value: unknown): value is EntryRow =>
  Array.isArray(value) &&
  value.length === 6 &&
  isString(value[0]) &&
  isString(value[2]) &&
  typeof value[3] === "boolean" &&
  typeof value[4] === "boolean" &&
  (value[5] === null || isKeysRow(value[5]));
const isFileRow = (value: unknown): value is FileRow =>
  Array.isArray(value) &&
  value.length === 6 &&
  isString(value[0]) &&
  typeof value[1] === "number" &&
  typeof value[2] === "number" &&
  typeof value[3] === "number" &&
  typeof value[4] === "number" &&
  Number.isInteger(value[5]);
