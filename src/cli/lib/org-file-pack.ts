// The on-disk layout of the org file cache (org-file-cache.ts): one file per directory and
// version, `analyses.pack`, laid out so that a run which changed one file of 10,000 reads, parses
// and writes little of it: a head line, the index (entry lines and the stat index), the body,
// then appended records:
//
//   1. {"format", "version", "entries", "index", "base", "check"}: `entries` is the number of
//      entry lines, `index` the length of the index, `base` that of the index and the body,
//      `check` the index's SHA-256;
//   2. one line per entry: `<hash> <length> <lint><plain> [check, keys]`: the text's hash, the
//      length of its analysis in the body, whether it holds lint findings and whether it is
//      plain (0 or 1 each), the entry's own check (of its hash, fields and bytes), and what the
//      checks across files compare (id, context prefix, slug, DID keys, trunk match values:
//      SummaryKeys; null when the org did not load);
//   3. the stat index, one JSON line: a row per file (name, size, mtime, ctime, inode, its
//      entry's index);
//
// then every entry's analysis as JSON, in the entries' order. A run reads the head, the index
// and the records (4.7 MB at 10,000 orgs, not the 18 MB body), finds an entry's line by its hash
// (the lines' heads are scanned; a line's JSON is parsed only for an entry whose keys or bytes
// are asked for: a changed file's, one a clash is placed in), and reads
// an entry's analysis from the body, at its offset, only when it has something to report (not
// "plain") or a clash must be placed or the gateway rebuilt.
//
// A run that changed a few files appends a record instead of writing the pack again: `<check>
// [entry rows, stat rows]\n` and the new entries' bytes, where an entry row is `[hash, length,
// check, lint, plain, keys]`, a stat row names its entry by hash (`[name]` alone: the file's row
// is dropped) and `check` is the SHA-256 of the rest of the record. A later record's row for a
// hash or a name replaces an earlier one. The cache writes the pack anew (compacting it) when the
// records grow past APPEND_LIMIT_*.
//
// Corruption: when the index's check holds, every entry line and stat row is as written; an
// entry's bytes in the body are used only when its own check holds (read with them). When the
// index's check does not hold, an entry is used only when its own check holds (its bytes read at
// once), and the stat index is dropped (the files are read and hashed again): a corrupted entry
// is a missing one. A record that does not pass its check (a torn append) ends the records there.
import { hash as digest } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { SummaryKeys } from "../../model/org-summary.js";

/** Bump when the layout changes. */
export const PACK_FORMAT = 5;

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
  /** Its check, when read back or made with the entry (kept: the bytes are the same). */
  check?: string;
}

/** An entry row of a record: hash, length, check, lint, plain, keys. */
type EntryRow = [string, number, string, boolean, boolean, KeysRow | null];
/** An entry line's JSON: check, keys. */
type EntryFields = [string, KeysRow | null];
/** A stat row as stored: name, size, mtime, ctime, inode, entry index. */
type FileRow = [string, number, number, number, number, number];

export function keysRow(keys: SummaryKeys): KeysRow {
  return [keys.id, keys.context_prefix, keys.slug, keys.dids, keys.trunk_matches];
}

export function keysOfRow([id, context_prefix, slug, dids, trunk_matches]: KeysRow): SummaryKeys {
  return { id, context_prefix, slug, dids, trunk_matches };
}

/** An entry's own check: its hash, its row's fields and its bytes. */
export function entryCheck(hash: string, entry: PackEntry): string {
  const fields = JSON.stringify([hash, entry.lint, entry.plain, entry.keys]);
  return digest("sha1", Buffer.concat([Buffer.from(`${fields}\n`), entry.bytes]), "hex");
}

/** Where a pack's bytes are read from: a file (read piece by piece), or bytes in memory. */
interface PackSource {
  readonly size: number;
  read(offset: number, length: number): Buffer;
}

function bytesSource(bytes: Buffer): PackSource {
  return { size: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) };
}

/** Reads `length` bytes at `offset` of the open file `fd` (fewer at its end). */
function readAt(fd: number, offset: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const got = readSync(fd, buffer, done, length - done, offset + done);
    if (got === 0) break;
    done += got;
  }
  return buffer.subarray(0, done);
}

/**
 * The pack file at `path`, open as `fd` while the pack is decoded (head, index, records); an
 * entry's bytes asked for later are read by opening the file again: if the pack was replaced
 * meanwhile, they fail the entry's check and the entry is a missing one.
 */
function fileSource(path: string, fd: number): PackSource & { close(): void } {
  let open: number | undefined = fd;
  return {
    size: fstatSync(fd).size,
    read(offset, length) {
      if (open !== undefined) return readAt(open, offset, length);
      const again = openSync(path, "r");
      try {
        return readAt(again, offset, length);
      } finally {
        closeSync(again);
      }
    },
    close() {
      if (open !== undefined) closeSync(open);
      open = undefined;
    },
  };
}

/** "1" in a line's flags. */
const ONE = 0x31;

/** The head line's longest length read at first (a longer one is read whole after). */
const HEAD_READ = 4096;

/** A pack read back: its entries found by hash, its stat index by name. */
export class DecodedPack {
  /** The body, when read whole (`loadBody`). */
  private body: Buffer | undefined;

  private constructor(
    private readonly source: PackSource,
    /** The index's bytes (entry lines and stat index). */
    private readonly index: Buffer,
    /** Where the body starts in the pack. */
    private readonly bodyStart: number,
    /** Each entry by hash: the base's line (its JSON's place in `index`, its bytes' place in the pack), or an appended entry. */
    private readonly byHash: Map<string, BaseLine | PackEntry>,
    /** Whether the index's check held (every entry line and stat row as written). */
    readonly intact: boolean,
    /** The stat index (empty when the index's check did not hold). */
    readonly files: ReadonlyMap<string, StatRow>,
    /** The appended records read, their bytes, and whether the last one ended them soundly. */
    readonly appended: { records: number; bytes: number; base: number; sound: boolean },
  ) {}

  /** The pack's bytes, or null when they are not a pack of this format and version. */
  static decode(bytes: Buffer, version: string): DecodedPack | null {
    return DecodedPack.read(bytesSource(bytes), version);
  }

  /**
   * The pack in the file at `path` (its head, index and records read now, an entry's analysis
   * when asked for), or null when it is missing or not a pack of this format and version.
   */
  static open(path: string, version: string): DecodedPack | null {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      return null;
    }
    const source = fileSource(path, fd);
    try {
      return DecodedPack.read(source, version);
    } finally {
      source.close();
    }
  }

  private static read(source: PackSource, version: string): DecodedPack | null {
    try {
      let start = source.read(0, Math.min(HEAD_READ, source.size));
      let first = start.indexOf(10);
      if (first < 0 && start.length < source.size) {
        start = source.read(0, source.size);
        first = start.indexOf(10);
      }
      if (first < 0) return null;
      const head = JSON.parse(start.toString("utf8", 0, first)) as Record<string, unknown>;
      if (head.format !== PACK_FORMAT || head.version !== version) return null;
      const { entries, index: indexLength, base } = head;
      if (
        !Number.isInteger(entries) ||
        !Number.isInteger(indexLength) ||
        !Number.isInteger(base) ||
        (indexLength as number) > (base as number)
      ) {
        return null;
      }
      const bodyStart = first + 1 + (indexLength as number);
      const baseEnd = first + 1 + (base as number);
      if (baseEnd > source.size) return null;
      const index = source.read(first + 1, indexLength as number);
      if (index.length !== indexLength) return null;
      const intact = head.check === digest("sha256", index, "hex");
      // The entry lines: hash and length read from each line's head, the rest when asked for.
      const byHash = new Map<string, BaseLine | PackEntry>();
      const order: string[] = [];
      let at = 0;
      let offset = bodyStart;
      for (let n = 0; n < (entries as number); n++) {
        const end = index.indexOf(10, at);
        const space = index.indexOf(32, at);
        const second = space < 0 ? -1 : index.indexOf(32, space + 1);
        // `<lint><plain> ` after the length: two digits and a space.
        if (end < 0 || space < 0 || second < 0 || second + 4 > end) return null;
        const hash = index.toString("latin1", at, space);
        const length = Number(index.toString("latin1", space + 1, second));
        // Lengths place every later entry: one that is not a length makes the body unreadable.
        if (!Number.isInteger(length) || length < 0) return null;
        const lint = index[second + 1] === ONE;
        const plain = index[second + 2] === ONE;
        byHash.set(hash, { lint, plain, json: [second + 4, end], offset, length });
        order.push(hash);
        offset += length;
        at = end + 1;
      }
      if (offset > baseEnd) return null;
      const lineEnd = index.indexOf(10, at);
      if (lineEnd !== index.length - 1) return null;
      const files = new Map<string, StatRow>();
      if (intact) {
        const fileRows: unknown = JSON.parse(index.toString("utf8", at, lineEnd));
        if (!Array.isArray(fileRows)) return null;
        for (const row of fileRows) {
          if (!isFileRow(row)) continue;
          const hash = order[row[5]];
          if (hash !== undefined) files.set(row[0], [row[1], row[2], row[3], row[4], hash]);
        }
      }
      const tail = source.read(baseEnd, source.size - baseEnd);
      const appended = { records: 0, bytes: tail.length, base: baseEnd, sound: true };
      for (let at = 0; at < tail.length; ) {
        const end = tail.indexOf(10, at);
        const space = tail.indexOf(32, at);
        const record =
          end < 0 || space < 0 || space > end ? null : parseRecord(tail, at, space, end);
        if (record === null) {
          appended.sound = false;
          break;
        }
        let start = end + 1;
        for (const [hash, length, check, lint, plain, keys] of record.entries) {
          const bytes = tail.subarray(start, start + length);
          byHash.set(hash, { lint, plain, keys, check, bytes });
          start += length;
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
      return new DecodedPack(source, index, bodyStart, byHash, intact, files, appended);
    } catch {
      return null;
    }
  }

  get size(): number {
    return this.byHash.size;
  }

  /** The hashes of the entries, in the pack's order (the base's, then the appended ones). */
  hashes(): IterableIterator<string> {
    return this.byHash.keys();
  }

  /** Whether the pack has a row for `hash` (sound or not). */
  has(hash: string): boolean {
    return this.byHash.has(hash);
  }

  /**
   * Whether the entry of `hash` has lint findings and is plain, if there is one and its line is
   * as written: as the line says when the index's check held; otherwise checked with its bytes
   * (read now).
   */
  flags(hash: string): { lint: boolean; plain: boolean } | undefined {
    const found = this.byHash.get(hash);
    const vouched = found !== undefined && ("bytes" in found || this.intact);
    // Every entry is checked with its bytes then: the body is read once, not entry by entry.
    if (!vouched && found !== undefined) this.loadBody();
    const sound = vouched ? found : this.entry(hash);
    return sound && { lint: sound.lint, plain: sound.plain };
  }

  /**
   * The keys of the entry of `hash` (null: the org did not load), of an entry whose `flags`
   * were found: from its line, which the index's check or the entry's own check vouched for.
   */
  keys(hash: string): KeysRow | null {
    const found = this.byHash.get(hash);
    if (found === undefined) throw new Error(`no cache entry ${hash}`);
    if ("bytes" in found) return found.keys;
    const fields = this.fields(found);
    if (fields === undefined) throw new Error(`the cache entry ${hash} has no keys`);
    return fields[1];
  }

  /** The entry of `hash` with its bytes, if there is one and it is as it was written. */
  entry(hash: string): PackEntry | undefined {
    const found = this.byHash.get(hash);
    if (found === undefined || "bytes" in found) return found;
    const fields = this.fields(found);
    if (fields === undefined) return undefined;
    const [check, keys] = fields;
    const { lint, plain } = found;
    const bytes = this.body
      ? this.body.subarray(
          found.offset - this.bodyStart,
          found.offset - this.bodyStart + found.length,
        )
      : this.source.read(found.offset, found.length);
    const entry: PackEntry = { lint, plain, keys, bytes, check };
    if (bytes.length !== found.length || entryCheck(hash, entry) !== check) return undefined;
    return entry;
  }

  /** Reads the whole body at once: before asking for many entries' bytes (a compaction). */
  loadBody(): void {
    if (this.body) return;
    let end = this.bodyStart;
    for (const found of this.byHash.values()) {
      if (!("bytes" in found)) end = Math.max(end, found.offset + found.length);
    }
    this.body = this.source.read(this.bodyStart, end - this.bodyStart);
  }

  private fields(line: BaseLine): EntryFields | undefined {
    try {
      const fields: unknown = JSON.parse(this.index.toString("utf8", line.json[0], line.json[1]));
      return isEntryFields(fields) ? fields : undefined;
    } catch {
      return undefined;
    }
  }
}

/** An entry line of the base: its flags, where its JSON is in the index, where its bytes are in the pack. */
interface BaseLine {
  lint: boolean;
  plain: boolean;
  json: [number, number];
  offset: number;
  length: number;
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
  const rows: EntryRow[] = [...entries].map(([hash, entry]) => [
    hash,
    entry.bytes.length,
    entry.check ?? entryCheck(hash, entry),
    entry.lint,
    entry.plain,
    entry.keys,
  ]);
  const fileRows: AppendedFileRow[] = [...files].map(([name, row]) =>
    row === null ? [name] : [name, ...row],
  );
  const rest = Buffer.concat([
    Buffer.from(`${JSON.stringify([rows, fileRows])}\n`),
    ...[...entries.values()].map((entry) => entry.bytes),
  ]);
  return Buffer.concat([Buffer.from(`${digest("sha256", rest, "hex")} `), rest]);
}

/** The pack of these entries (by hash, in this order) and stat rows. */
export function encodePack(
  version: string,
  entries: ReadonlyMap<string, PackEntry>,
  files: ReadonlyMap<string, StatRow>,
): Buffer {
  const lines: string[] = [];
  const indexOf = new Map<string, number>();
  for (const [hash, entry] of entries) {
    if (/[\s]/.test(hash)) throw new Error(`a cache entry's hash has a space: ${hash}`);
    indexOf.set(hash, lines.length);
    const fields: EntryFields = [entry.check ?? entryCheck(hash, entry), entry.keys];
    const flags = `${entry.lint ? 1 : 0}${entry.plain ? 1 : 0}`;
    lines.push(`${hash} ${entry.bytes.length} ${flags} ${JSON.stringify(fields)}\n`);
  }
  const fileRows: FileRow[] = [];
  for (const [name, [size, mtimeMs, ctimeMs, ino, hash]] of files) {
    const index = indexOf.get(hash);
    if (index !== undefined) fileRows.push([name, size, mtimeMs, ctimeMs, ino, index]);
  }
  const index = Buffer.from(`${lines.join("")}${JSON.stringify(fileRows)}\n`);
  const body = [...entries.values()].map((entry) => entry.bytes);
  const bodyLength = body.reduce((sum, bytes) => sum + bytes.length, 0);
  const head = {
    format: PACK_FORMAT,
    version,
    entries: lines.length,
    index: index.length,
    base: index.length + bodyLength,
    check: digest("sha256", index, "hex"),
  };
  return Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`), index, ...body]);
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
const isEntryFields = (value: unknown): value is EntryFields =>
  Array.isArray(value) &&
  value.length === 2 &&
  isString(value[0]) &&
  (value[1] === null || isKeysRow(value[1]));
const isEntryRow = (value: unknown): value is EntryRow =>
  Array.isArray(value) &&
  value.length === 6 &&
  isString(value[0]) &&
  Number.isInteger(value[1]) &&
  (value[1] as number) >= 0 &&
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
