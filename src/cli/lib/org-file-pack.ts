// The on-disk layout of the org file cache (org-file-cache.ts): one file per directory and
// version, `analyses.pack`, laid out so that a run which changed one file of 10,000 parses
// little of it and writes little. Three lines of JSON, then the body, then appended records:
//
//   1. {"format", "version", "base", "check"}: `base` is the length of lines 2-3 and the body,
//      `check` their SHA-256;
//   2. the entries, one row each: the text's hash, the length of its analysis in the body, the
//      entry's own check, lint, plain, and what the checks across files compare (id, context
//      prefix, slug, DID keys, trunk match values: SummaryKeys; null when the org did not load);
//   3. the stat index, one row per file: name, size, mtime, ctime, inode, its entry's index;
//
// then every entry's analysis as JSON, in the entries' order. The rows are what every run
// needs (10,000 summaries' keys and stat rows); an analysis is parsed only when its entry is
// not plain (it has a problem, a secret reference or a lint finding to report) or when a clash
// must be placed or the gateway rebuilt.
//
// A run that changed a few files appends a record instead of writing the pack again (18 MB at
// 10,000 files): `<check> [entry rows, stat rows]\n` and the new entries' bytes, where a stat row
// names its entry by hash (`[name]` alone: the file's row is dropped) and `check` is the SHA-256
// of the rest of the record. A later record's row for a hash or a name replaces an earlier one.
// The cache writes the pack anew (compacting it) when the records grow past APPEND_LIMIT_*.
//
// Corruption: when the pack's check holds, every row and byte of the base is as written. When
// it does not, each entry is used only if its own check (of its hash, fields and bytes) holds,
// and the stat index is dropped (the files are read and hashed again): a corrupted entry is a
// missing one. A record that does not pass its check (a torn append) ends the records there.
import { hash as digest } from "node:crypto";
import type { SummaryKeys } from "../../model/org-summary.js";

/** Bump when the layout changes. */
export const PACK_FORMAT = 4;

/** Past this many appended records, or appended bytes beyond this share of the base, the pack is written anew. */
export const APPEND_LIMIT_RECORDS = 256;
export const APPEND_LIMIT_SHARE = 1 / 8;

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
    /** Where each row's bytes start in `bytes`. */
    private readonly offsets: readonly number[],
    private readonly byHash: ReadonlyMap<string, number>,
    private readonly bytes: Buffer,
    /** Whether the base's check held (every row and byte of it as written). */
    readonly intact: boolean,
    /** The rows of the base (the others were appended, each record checked). */
    private readonly baseRows: number,
    /** The stat index (empty when the pack's check did not hold). */
    readonly files: ReadonlyMap<string, StatRow>,
    /** The appended records read, their bytes, and whether the last one ended them soundly. */
    readonly appended: { records: number; bytes: number; base: number; sound: boolean },
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
      const baseEnd = first + 1 + (head.base as number);
      if (!Number.isInteger(head.base) || baseEnd > bytes.length || baseEnd <= third) return null;
      const intact = head.check === digest("sha256", bytes.subarray(first + 1, baseEnd), "hex");
      const rows: unknown[] = JSON.parse(bytes.toString("utf8", first + 1, second));
      const fileRows: unknown = intact ? JSON.parse(bytes.toString("utf8", second + 1, third)) : [];
      if (!Array.isArray(rows) || !Array.isArray(fileRows)) return null;
      const offsets: number[] = new Array(rows.length);
      const byHash = new Map<string, number>();
      let offset = third + 1;
      for (const [index, row] of rows.entries()) {
        // Lengths place every later entry: one that is not a length makes the body unreadable.
        const length = Array.isArray(row) ? row[1] : undefined;
        if (!Number.isInteger(length) || length < 0) return null;
        offsets[index] = offset;
        offset += length;
        const hash = (row as unknown[])[0];
        if (typeof hash === "string") byHash.set(hash, index);
      }
      if (offset > baseEnd) return null;
      const files = new Map<string, StatRow>();
      for (const row of fileRows) {
        if (!isFileRow(row)) continue;
        const hash = (rows[row[5]] as unknown[] | undefined)?.[0];
        if (typeof hash === "string") files.set(row[0], [row[1], row[2], row[3], row[4], hash]);
      }
      const baseRows = rows.length;
      const appended = { records: 0, bytes: bytes.length - baseEnd, base: baseEnd, sound: true };
      for (let at = baseEnd; at < bytes.length; ) {
        const end = bytes.indexOf(10, at);
        const space = bytes.indexOf(32, at);
        const record =
          end < 0 || space < 0 || space > end ? null : parseRecord(bytes, at, space, end);
        if (record === null) {
          appended.sound = false;
          break;
        }
        let start = end + 1;
        for (const row of record.entries) {
          byHash.set(row[0], rows.length);
          rows.push(row);
          offsets.push(start);
          start += row[1];
        }
        for (const row of record.files) {
          if (row.length === 1) files.delete(row[0]);
          else if (intact && byHash.has(row[5])) {
            files.set(row[0], [row[1], row[2], row[3], row[4], row[5]]);
          }
        }
        appended.records++;
        at = start;
      }
      return new DecodedPack(rows, offsets, byHash, bytes, intact, baseRows, files, appended);
    } catch {
      return null;
    }
  }

  get size(): number {
    return this.byHash.size;
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
    const bytes = this.bytes.subarray(offset, offset + length);
    const entry: PackEntry = { lint, plain, keys, bytes, check };
    // An appended entry's record passed its check when it was read.
    if (index < this.baseRows && !this.intact && entryCheck(hash, entry) !== check) {
      return undefined;
    }
    return entry;
  }
}

/** An appended stat row: name, size, mtime, ctime, inode, the hash of its entry; or the name alone. */
type AppendedFileRow = [string, number, number, number, number, string] | [string];

/** The record whose line is bytes[at, end) (its check before `space`), or null when unsound. */
function parseRecord(
  bytes: Buffer,
  at: number,
  space: number,
  end: number,
): { entries: EntryRow[]; files: AppendedFileRow[] } | null {
  const check = bytes.toString("latin1", at, space);
  const parsed: unknown = JSON.parse(bytes.toString("utf8", space + 1, end));
  if (!Array.isArray(parsed) || parsed.length !== 2) return null;
  const [entries, files] = parsed as [unknown, unknown];
  if (!Array.isArray(entries) || !entries.every(isEntryRow)) return null;
  if (!Array.isArray(files) || !files.every(isAppendedFileRow)) return null;
  const length = entries.reduce((sum, row) => sum + (row as EntryRow)[1], 0);
  if (end + 1 + length > bytes.length) return null;
  if (digest("sha256", bytes.subarray(space + 1, end + 1 + length), "hex") !== check) return null;
  return { entries, files };
}

/**
 * A record to append to a pack: these entries (new, or replacing an entry of the same hash) and
 * these stat rows (null: the file's row is dropped).
 */
export function encodeRecord(
  entries: ReadonlyMap<string, PackEntry>,
  files: ReadonlyMap<string, StatRow | null>,
): Buffer {
  const rows: EntryRow[] = [...entries].map(([hash, entry]) => entryRow(hash, entry));
  const fileRows: AppendedFileRow[] = [...files].map(([name, row]) =>
    row === null ? [name] : [name, ...row],
  );
  const rest = Buffer.concat([
    Buffer.from(`${JSON.stringify([rows, fileRows])}\n`),
    ...[...entries.values()].map((entry) => entry.bytes),
  ]);
  return Buffer.concat([Buffer.from(`${digest("sha256", rest, "hex")} `), rest]);
}

function entryRow(hash: string, entry: PackEntry): EntryRow {
  return [
    hash,
    entry.bytes.length,
    entry.check ?? entryCheck(hash, entry),
    entry.lint,
    entry.plain,
    entry.keys,
  ];
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
    rows.push(entryRow(hash, entry));
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
  const head = {
    format: PACK_FORMAT,
    version,
    base: rest.length,
    check: digest("sha256", rest, "hex"),
  };
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
const isAppendedFileRow = (value: unknown): value is AppendedFileRow =>
  Array.isArray(value) &&
  ((value.length === 1 && isString(value[0])) ||
    (value.length === 6 &&
      isString(value[0]) &&
      typeof value[1] === "number" &&
      typeof value[2] === "number" &&
      typeof value[3] === "number" &&
      typeof value[4] === "number" &&
      isString(value[5])));
