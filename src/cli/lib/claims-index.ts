// The checks across org files as an index a change updates (docs/gitops.md, "The claims index").
// What the checks compare (ids, context prefixes, slugs, DID keys, trunk match entries) is kept
// beside the cache's pack, one line per claim, sorted by claim and naming the file that holds it,
// so a run that changed one file of 10,000 looks up that file's claims instead of collecting
// every file's: the index answers "who else claims this?" by binary search over the lines.
//
// Layout of `claims.index` (in the cache's version directory):
//   1. {"format", "version", "base", "check"}: `base` is the length of lines 2-4 and the claim
//      lines, `check` their SHA-256;
//   2. the files, in the order they were indexed: [name, hash of the text its claims came from];
//   3. {"clashing": the files that clash with another (their indexes in line 2), "lengths": the
//      prefix lengths of the address ranges below, by family (the holders a range looks up)};
//   4. the claim lines, sorted (bytewise; every line is ASCII), each ending in its file's index:
//        `i|p|s|d <JSON key> <file>`            id, context prefix, slug, DID key
//        `n <JSON lower-case name> <file>`      a trunk match entry that is a host name
//        `4|6 <first address, hex> <prefix, 3 digits> <file>`   one that is an address range
//   then the journal: one line per file indexed since, `<sha1 of the JSON> [name, hash]`: the
//   file's lines above no longer hold its claims (its current text's claims are the run's).
//
// Soundness rests on the hashes alone: a file takes the index's lines only when the hash of its
// text now is the one they were made from; any other file (changed, new, journaled) is checked
// from its own keys, and so is every file holding a claim that equals or overlaps one of those
// files' claims, and every file that clashed when the lines were written. A clash needs two
// files; if neither changed since the lines were written, both are among the files that clashed.
// A journal line that does not pass its check ends the journal (a torn append): the files it
// named are then seen changed again, which costs time, never a wrong answer. A base whose check
// fails, or of another format or version, is rebuilt from the run's files.
import { hash as digest } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../atomic-files.js";
import { nestingPartners, prefixesNest } from "../../model/context-prefix-nesting.js";
import {
  claimProblems,
  crossOrgProblems,
  type EarlierClaims,
  keysOf,
  type OrgSummary,
  type SummarizedFile,
  type SummaryKeys,
  summaryKeys,
} from "../../model/org-summary.js";
import { matchRange } from "../../model/trunk-identify.js";
import type { SourceDiagnostic } from "../../model/yaml.js";

/** The index's file name in the cache's version directory. */
export const CLAIMS_INDEX = "claims.index";

/** Bump when the layout changes. */
export const CLAIMS_INDEX_FORMAT = 1;

/**
 * How many files the journal may name before the index is written anew: each run checks the
 * journaled files' claims from their keys, so a long journal slows every run a little.
 */
export const JOURNAL_LIMIT = 200;

/** A file of a run, as the index takes it. */
export interface RunFile {
  /** Its name in the index's directory. */
  name: string;
  /** The hash of its text (null: not a text the index may stand for, e.g. another revision's). */
  hash: string | null;
  /** Its summary as reported (null: the org did not load, it claims nothing). */
  summarized: SummarizedFile | null;
}

type Kind = "i" | "p" | "s" | "d";

/** A trunk match entry as the index compares it. */
type MatchClaim =
  | { family: 4 | 6; first: bigint; last: bigint; prefix: number }
  | { family: "name"; name: string };

/** JSON of a string with every non-ASCII character escaped: the lines sort as their bytes do. */
function asciiJson(value: string): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function matchClaim(value: string): MatchClaim {
  const range = matchRange(value);
  if (range === null) return { family: "name", name: value.toLowerCase() };
  return range;
}

const hexWidth = (family: 4 | 6) => (family === 4 ? 8 : 32);
const hex = (family: 4 | 6, n: bigint) => n.toString(16).padStart(hexWidth(family), "0");
const prefixText = (prefix: number) => String(prefix).padStart(3, "0");

/** The lines' beginnings (without the file) of a file's claims. */
function claimHeads(keys: SummaryKeys): string[] {
  const heads = [`i\t${asciiJson(keys.id)}\t`, `p\t${asciiJson(keys.context_prefix)}\t`];
  if (keys.slug !== null) heads.push(`s\t${asciiJson(keys.slug)}\t`);
  for (const key of keys.dids) heads.push(`d\t${asciiJson(key)}\t`);
  for (const value of keys.trunk_matches) {
    const claim = matchClaim(value);
    heads.push(
      claim.family === "name"
        ? `n\t${asciiJson(claim.name)}\t`
        : `${claim.family}\t${hex(claim.family, claim.first)}\t${prefixText(claim.prefix)}\t`,
    );
  }
  return heads;
}

/** The claim heads of summaries made ahead of the index (`prepareClaims`), by summary. */
const preparedHeads = new WeakMap<OrgSummary, string[]>();

/**
 * Makes the index lines' beginnings of a fresh analysis's claims now: a load calls it as each
 * file's analysis comes, while other threads still parse, so that writing the index after the
 * last file (a cold run's) only sorts them.
 */
export function prepareClaims(summary: OrgSummary): void {
  if (!preparedHeads.has(summary)) preparedHeads.set(summary, claimHeads(summaryKeys(summary)));
}

/** The claim heads of a file of a run: its own keys' (a cached entry's), or its summary's. */
function headsOf(file: SummarizedFile): string[] {
  if (file.keys !== undefined) return claimHeads(file.keys);
  return preparedHeads.get(file.summary) ?? claimHeads(summaryKeys(file.summary));
}

function overlaps(a: MatchClaim, b: MatchClaim): boolean {
  if (a.family === "name" || b.family === "name") {
    return a.family === "name" && b.family === "name" && a.name === b.name;
  }
  return a.family === b.family && a.first <= b.last && b.first <= a.last;
}

/** The files that clash with another among these lines (sorted), by index. */
function clashingFiles(lines: readonly string[]): Set<number> {
  const clashing = new Set<number>();
  const fileOf = (line: string) => Number(line.slice(line.lastIndexOf("\t") + 1));
  const headOf = (line: string) => line.slice(0, line.lastIndexOf("\t") + 1);
  // Equal claims are neighbours.
  for (let start = 0; start < lines.length; ) {
    let end = start + 1;
    const head = headOf(lines[start]!);
    while (end < lines.length && headOf(lines[end]!) === head) end++;
    const files = new Set(lines.slice(start, end).map(fileOf));
    if (files.size > 1) for (const file of files) clashing.add(file);
    start = end;
  }
  // Context prefixes that nest (one begins another's, context-prefix-nesting.ts): every file with
  // a partner clashes, and so does the partner, which has one too.
  const prefixLines = lines.filter((line) => line[0] === "p");
  const partners = nestingPartners(prefixLines.map((line) => JSON.parse(line.split("\t")[1]!)));
  partners.forEach((partner, k) => {
    if (partner >= 0) clashing.add(fileOf(prefixLines[k]!));
  });
  // Ranges: sorted by first address, then the larger block first, every block still open at a
  // claim's first address holds it (two address blocks overlap only when one holds the other).
  for (const family of ["4", "6"]) {
    const open: { last: bigint; file: number }[] = [];
    for (const line of lines) {
      if (line[0] !== family) continue;
      const [, firstHex, prefix, file] = line.split("\t") as [string, string, string, string];
      const bits = family === "4" ? 32 : 128;
      const first = BigInt(`0x${firstHex}`);
      const last = first + (1n << BigInt(bits - Number(prefix))) - 1n;
      while (open.length > 0 && open[open.length - 1]!.last < first) open.pop();
      const owner = Number(file);
      for (const holder of open) {
        if (holder.file !== owner) {
          clashing.add(holder.file);
          clashing.add(owner);
        }
      }
      open.push({ last, file: owner });
    }
  }
  return clashing;
}

/**
 * Sorted lines, each ending in a newline, searched in place: a probe finds the line around a
 * byte offset, so reading the index costs no pass over its 100,000 lines.
 */
class SortedLines {
  constructor(
    private readonly bytes: Buffer,
    /** The prefix lengths of the address ranges among the lines, by family. */
    readonly lengths: Readonly<Record<4 | 6, readonly number[]>>,
  ) {}

  /** Where the line starting at `start` ends (its newline). */
  private endOf(start: number): number {
    return this.bytes.indexOf(10, start);
  }

  /** The offset of the first line not below `target` (the end of the bytes: none). */
  private lowerBound(target: Buffer): number {
    // Both bounds are line starts; a probe compares the line holding the midpoint.
    let low = 0;
    let high = this.bytes.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      // (A negative offset would search from the end: the first line starts at 0.)
      const start = mid === 0 ? 0 : Math.max(low, this.bytes.lastIndexOf(10, mid - 1) + 1);
      const end = this.endOf(start);
      // compare() < 0: the line sorts before the target.
      if (this.bytes.compare(target, 0, target.length, start, end) < 0) low = end + 1;
      else high = start;
    }
    return low;
  }

  /** The file named at the end of the line that ends at `end`. */
  private fileOf(end: number): number {
    const tab = this.bytes.lastIndexOf(9, end - 1);
    return Number(this.bytes.toString("latin1", tab + 1, end));
  }

  /** The files of the lines that begin with `head`. */
  filesWith(head: string, into: (file: number) => void): void {
    const target = Buffer.from(head, "latin1");
    for (let start = this.lowerBound(target); start < this.bytes.length; ) {
      const end = this.endOf(start);
      if (
        end - start < target.length ||
        this.bytes.compare(target, 0, target.length, start, start + target.length) !== 0
      ) {
        return;
      }
      into(this.fileOf(end));
      start = end + 1;
    }
  }

  /** The files of the range lines of `family` whose first address is in [first, last]. */
  filesStartingIn(family: 4 | 6, first: bigint, last: bigint, into: (file: number) => void): void {
    const lowest = Buffer.from(`${family}\t${hex(family, first)}\t`, "latin1");
    const highest = Buffer.from(`${family}\t${hex(family, last)}\t\x7f`, "latin1");
    for (let start = this.lowerBound(lowest); start < this.bytes.length; ) {
      const end = this.endOf(start);
      if (this.bytes.compare(highest, 0, highest.length, start, end) >= 0) return;
      into(this.fileOf(end));
      start = end + 1;
    }
  }
}

/** The files with a claim in the lines that overlaps a trunk match entry. */
function overlappingInLines(lines: SortedLines, claim: MatchClaim, into: (file: number) => void) {
  if (claim.family === "name") {
    lines.filesWith(`n\t${asciiJson(claim.name)}\t`, into);
    return;
  }
  const bits = claim.family === 4 ? 32 : 128;
  // Blocks starting inside the entry's range lie inside it or hold it; the others that hold it
  // start before it, at the start of its enclosing block of each shorter prefix the lines have.
  lines.filesStartingIn(claim.family, claim.first, claim.last, into);
  for (const prefix of lines.lengths[claim.family]) {
    if (prefix >= claim.prefix) continue;
    const hostBits = BigInt(bits - prefix);
    const start = (claim.first >> hostBits) << hostBits;
    if (start === claim.first) continue;
    lines.filesWith(`${claim.family}\t${hex(claim.family, start)}\t${prefixText(prefix)}\t`, into);
  }
}

/**
 * The files with a context prefix line that nests with `prefix` (one begins the other: the same
 * prefix included). The longer ones (and `prefix` itself) are the lines whose JSON begins with
 * its JSON less the closing quote (escaping is per character and no escape is a prefix of
 * another); the shorter ones are each of its leading parts, looked up exactly.
 */
function nestingInLines(lines: SortedLines, prefix: string, into: (file: number) => void) {
  lines.filesWith(`p\t${asciiJson(prefix).slice(0, -1)}`, into);
  for (let length = 1; length < prefix.length; length++) {
    lines.filesWith(`p\t${asciiJson(prefix.slice(0, length))}\t`, into);
  }
}

interface DecodedIndex {
  names: string[];
  hashes: string[];
  clashing: number[];
  lines: SortedLines;
  /** The journal: the last hash recorded for each file named since the lines were written. */
  journal: Map<string, string>;
  /** Whether every journal line passed its check (else the next save writes the index anew). */
  journalSound: boolean;
}

function decodeIndex(bytes: Buffer, version: string): DecodedIndex | null {
  const headEnd = bytes.indexOf(10);
  if (headEnd < 0) return null;
  try {
    const head = JSON.parse(bytes.toString("utf8", 0, headEnd)) as Record<string, unknown>;
    if (head.format !== CLAIMS_INDEX_FORMAT || head.version !== version) return null;
    const base = head.base;
    if (!Number.isInteger(base) || headEnd + 1 + (base as number) > bytes.length) return null;
    const baseBytes = bytes.subarray(headEnd + 1, headEnd + 1 + (base as number));
    if (digest("sha256", baseBytes, "hex") !== head.check) return null;
    const filesEnd = baseBytes.indexOf(10);
    const clashEnd = baseBytes.indexOf(10, filesEnd + 1);
    const files = JSON.parse(baseBytes.toString("utf8", 0, filesEnd)) as [string, string][];
    const { clashing, lengths } = JSON.parse(
      baseBytes.toString("utf8", filesEnd + 1, clashEnd),
    ) as {
      clashing: number[];
      lengths: Record<4 | 6, number[]>;
    };
    const claimBytes = baseBytes.subarray(clashEnd + 1);
    const journal = new Map<string, string>();
    let journalSound = true;
    const rest = bytes.subarray(headEnd + 1 + (base as number));
    for (let at = 0; at < rest.length; ) {
      const end = rest.indexOf(10, at);
      const line = rest.toString("utf8", at, end < 0 ? rest.length : end);
      const space = line.indexOf(" ");
      const json = line.slice(space + 1);
      if (end < 0 || space < 0 || digest("sha1", json, "hex") !== line.slice(0, space)) {
        journalSound = false;
        break;
      }
      const [name, hash] = JSON.parse(json) as [string, string];
      journal.set(name, hash);
      at = end + 1;
    }
    return {
      names: files.map(([name]) => name),
      hashes: files.map(([, hash]) => hash),
      clashing,
      lines: new SortedLines(claimBytes, lengths),
      journal,
      journalSound,
    };
  } catch {
    return null;
  }
}

/** The index of these files (their order), with its clashing files. */
function encodeIndex(version: string, files: readonly RunFile[]): Buffer {
  const lines: string[] = [];
  files.forEach((file, index) => {
    if (file.summarized === null) return;
    for (const head of headsOf(file.summarized)) lines.push(`${head}${index}`);
  });
  lines.sort();
  const clashing = [...clashingFiles(lines)].sort((a, b) => a - b);
  const lengths = { 4: new Set<number>(), 6: new Set<number>() };
  for (const line of lines) {
    if (line[0] === "4" || line[0] === "6") lengths[line[0]].add(Number(line.split("\t")[2]));
  }
  const facts = {
    clashing,
    lengths: { 4: [...lengths[4]].sort((a, b) => a - b), 6: [...lengths[6]].sort((a, b) => a - b) },
  };
  const base = Buffer.from(
    `${JSON.stringify(files.map((file) => [file.name, file.hash]))}\n${JSON.stringify(facts)}\n${lines.map((line) => `${line}\n`).join("")}`,
  );
  const head = {
    format: CLAIMS_INDEX_FORMAT,
    version,
    base: base.length,
    check: digest("sha256", base, "hex"),
  };
  return Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`), base]);
}

/** A journal line naming a file whose lines no longer hold its claims. */
function journalLine(name: string, hash: string): string {
  const json = JSON.stringify([name, hash]);
  return `${digest("sha1", json, "hex")} ${json}\n`;
}

/** The claims index of one cache directory (its version's), as read at the start of a run. */
export class ClaimsIndex {
  private constructor(
    private readonly file: string,
    private readonly version: string,
    /** The index as read, or its bytes as this run wrote them (decoded when first used). */
    private stored: DecodedIndex | null | Buffer,
  ) {}

  /** The index as read or written (null: unusable). */
  private get decoded(): DecodedIndex | null {
    if (Buffer.isBuffer(this.stored)) this.stored = decodeIndex(this.stored, this.version);
    return this.stored;
  }

  /** The index in `dir` (the cache's version directory); unusable when missing or unsound. */
  static async open(dir: string, version: string): Promise<ClaimsIndex> {
    const file = join(dir, CLAIMS_INDEX);
    let decoded: DecodedIndex | null = null;
    try {
      decoded = decodeIndex(await readFile(file), version);
    } catch {
      // Missing: the first run writes it.
    }
    return new ClaimsIndex(file, version, decoded);
  }

  /** Whether the index was read back sound (else a run checks every file and writes it). */
  get usable(): boolean {
    return this.decoded !== null;
  }

  /**
   * The problems across these files (in this order), the same as `crossOrgProblems` gives:
   * from the index when it is sound and few files changed since it was written, else by
   * checking every file (and the index is then written anew by `record`).
   */
  problems(files: readonly RunFile[]): SourceDiagnostic[] {
    const plan = this.changes(files);
    if (plan === null) {
      return crossOrgProblems(files.flatMap((f) => (f.summarized ? [f.summarized] : [])));
    }
    return this.problemsFromIndex(files, plan.fresh);
  }

  /**
   * Which of these files the index does not stand for (changed, new, journaled), or null when
   * the index cannot be used for them (unsound, or more changed than a rebuild costs).
   */
  private changes(
    files: readonly RunFile[],
  ): { fresh: Set<string>; unjournaled: RunFile[] } | null {
    const index = this.decoded;
    if (index === null) return null;
    const fresh = new Set<string>(index.journal.keys());
    const unjournaled: RunFile[] = [];
    // Plain loops and, while the run lists the index's files in its order, no lookups by name:
    // this runs once per command over every file, before the JIT has warmed up.
    const { names, hashes, journal } = index;
    let byName: Map<string, string> | undefined;
    const hashOf = () => {
      byName ??= new Map(names.map((name, k) => [name, hashes[k]!]));
      return byName;
    };
    for (let k = 0; k < files.length; k++) {
      const file = files[k]!;
      const journaled = journal.size === 0 ? undefined : journal.get(file.name);
      const known = journaled ?? (names[k] === file.name ? hashes[k] : hashOf().get(file.name));
      if (file.hash !== null && file.hash === known) continue;
      fresh.add(file.name);
      if (file.hash !== null) unjournaled.push(file);
    }
    if (index.journal.size + unjournaled.length > JOURNAL_LIMIT) return null;
    return { fresh, unjournaled };
  }

  private problemsFromIndex(
    files: readonly RunFile[],
    fresh: ReadonlySet<string>,
  ): SourceDiagnostic[] {
    const index = this.decoded!;
    let position: Map<string, number> | undefined;
    // A line stands for its file when that file is in this run and did not change since. The
    // run usually lists the files as the index does: the same index is the same file.
    const positionOfLine = (fileIndex: number): number | undefined => {
      const name = index.names[fileIndex]!;
      if (fresh.has(name)) return undefined;
      if (files[fileIndex]?.name === name) return fileIndex;
      if (position === undefined) {
        position = new Map();
        for (let k = 0; k < files.length; k++) position.set(files[k]!.name, k);
      }
      return position.get(name);
    };
    // The fresh files' claims, from their keys.
    const freshExact = new Map<string, number[]>();
    const freshMatches: { claim: MatchClaim; at: number }[] = [];
    const freshPrefixes: { prefix: string; at: number }[] = [];
    const toCheck = new Set<number>();
    for (let at = 0; at < files.length; at++) {
      const file = files[at]!;
      if (file.summarized === null || !fresh.has(file.name)) continue;
      toCheck.add(at);
      const keys = keysOf(file.summarized);
      const exact: [Kind, string | null][] = [
        ["i", keys.id],
        ["p", keys.context_prefix],
        ["s", keys.slug],
        ...keys.dids.map((key): [Kind, string] => ["d", key]),
      ];
      for (const [kind, key] of exact) {
        if (key === null) continue;
        const head = `${kind}\t${asciiJson(key)}\t`;
        const holders = freshExact.get(head) ?? [];
        holders.push(at);
        freshExact.set(head, holders);
        // Files whose unchanged lines claim the same.
        index.lines.filesWith(head, (line) => {
          const other = positionOfLine(line);
          if (other !== undefined) toCheck.add(other);
        });
      }
      // Files whose unchanged lines hold a prefix nesting with this one's.
      freshPrefixes.push({ prefix: keys.context_prefix, at });
      nestingInLines(index.lines, keys.context_prefix, (line) => {
        const other = positionOfLine(line);
        if (other !== undefined) toCheck.add(other);
      });
      for (const value of keys.trunk_matches) {
        const claim = matchClaim(value);
        freshMatches.push({ claim, at });
        overlappingInLines(index.lines, claim, (line) => {
          const other = positionOfLine(line);
          if (other !== undefined) toCheck.add(other);
        });
      }
    }
    for (const line of index.clashing) {
      const at = positionOfLine(line);
      if (at !== undefined) toCheck.add(at);
    }

    const problems: SourceDiagnostic[] = [];
    for (const at of [...toCheck].sort((a, b) => a - b)) {
      const summarized = files[at]!.summarized!;
      // The earliest file before this one with the claim: its lines' or a fresh file's.
      const earliest = (collect: (into: (position: number) => void) => void) => {
        let first: number | undefined;
        collect((other) => {
          if (other < at && (first === undefined || other < first)) first = other;
        });
        return first === undefined ? undefined : files[first]!.summarized!.file;
      };
      const exact = (kind: Kind) => (key: string) => {
        const head = `${kind}\t${asciiJson(key)}\t`;
        return earliest((into) => {
          index.lines.filesWith(head, (line) => {
            const other = positionOfLine(line);
            if (other !== undefined) into(other);
          });
          for (const other of freshExact.get(head) ?? []) into(other);
        });
      };
      const earlier: EarlierClaims = {
        id: exact("i"),
        contextPrefix: exact("p"),
        nestingPrefix: (prefix) => {
          // The prefix of a file in the run, unchanged or fresh: its keys now.
          const prefixAt = (other: number) => keysOf(files[other]!.summarized!).context_prefix;
          let first: number | undefined;
          const consider = (other: number) => {
            if (other >= at || (first !== undefined && other >= first)) return;
            if (prefixAt(other) !== prefix) first = other;
          };
          nestingInLines(index.lines, prefix, (line) => {
            const other = positionOfLine(line);
            if (other !== undefined) consider(other);
          });
          for (const fresh of freshPrefixes) {
            if (prefixesNest(prefix, fresh.prefix)) consider(fresh.at);
          }
          return first === undefined
            ? undefined
            : { file: files[first]!.summarized!.file, prefix: prefixAt(first) };
        },
        slug: exact("s"),
        did: exact("d"),
        trunkMatch: (value) => {
          const claim = matchClaim(value);
          return earliest((into) => {
            overlappingInLines(index.lines, claim, (line) => {
              const other = positionOfLine(line);
              if (other !== undefined) into(other);
            });
            for (const fresh of freshMatches) if (overlaps(claim, fresh.claim)) into(fresh.at);
          });
        },
      };
      problems.push(...claimProblems(summarized, earlier));
    }
    return problems;
  }

  /**
   * Brings the index up to these files: appends the changed ones to the journal (one synced
   * append), or writes it anew when it was unusable, its journal broken or too long.
   * A failure to write only costs the next run its speed.
   */
  async record(files: readonly RunFile[]): Promise<void> {
    try {
      const plan = this.changes(files);
      if (plan === null || !this.decoded!.journalSound) {
        const bytes = encodeIndex(
          this.version,
          files.filter((f) => f.hash !== null),
        );
        await writeFileAtomic(this.file, bytes);
        // Later checks in this run (plan --base's other side) read the index just written; most
        // runs end here, so it is decoded only if one does.
        this.stored = bytes;
        return;
      }
      if (plan.unjournaled.length === 0) return;
      const handle = await open(this.file, "a");
      try {
        await handle.write(plan.unjournaled.map((f) => journalLine(f.name, f.hash!)).join(""));
        await handle.sync();
      } finally {
        await handle.close();
      }
      for (const file of plan.unjournaled) this.decoded!.journal.set(file.name, file.hash!);
    } catch {
      // A read-only checkout: the next run checks from the index as it is, or every file.
    }
  }
}
