// Loading org files as every command does: read them, take what the cache already knows about
// each text, analyze the rest on the worker pool, read their secrets, then run the checks that
// span files over every file's summary. A file is parsed only when it has no cache entry or its
// state is needed (a changed org that `plan --base` compiles), so a one-file change in 10,000
// files parses one file. The result is the same with and without the cache, in the same order.
import { readFileSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { type Clock, systemClock } from "../../clock.js";
import type { SourceDiagnostic } from "../../model/diagnostic.js";
import { OrgFileError, type OrgSource, orgFilePaths } from "../../model/org-file-paths.js";
import {
  finishOrgFile,
  type LoadedOrg,
  type OrgFileAnalysis,
  type PlacedDiagnostic,
  sortDiagnostics,
} from "../../model/org-file-result.js";
import { crossOrgProblems, type SummarizedFile, summaryKeys } from "../../model/org-summary.js";
import type { SecretEnvironment } from "../../model/secrets.js";
import {
  type AnalysisPool,
  analyzeSources,
  type PoolOptions,
  poolThreads,
  startAnalysisPool,
  worthWorkers,
} from "./analysis-pool.js";
import { type ClaimsIndex, prepareClaims, type RunFile } from "./claims-index.js";
import { type CachedAnalysis, CachedEntry, contentHash, OrgFileCache } from "./org-file-cache.js";

/**
 * An org file to load: its text (absent: the file `file` on disk, read only when the cache's
 * stat index does not know its hash or it must be parsed; bytes are decoded as UTF-8 only to
 * parse), the name it is reported under, where its cache lives.
 */
export interface OrgFileInput extends Omit<OrgSource, "text"> {
  text?: string | Buffer;
  /** The directory whose `.pbxctl/cache/` holds this text's entry (null: not cached). */
  cacheDir: string | null;
}

export interface LoadOrgFilesOptions extends PoolOptions {
  env: SecretEnvironment;
  /** Use the cache beside the files (`--no-cache`: false). */
  cache: boolean;
  /** Collect lint findings (`validate`, `lint`). */
  lint?: boolean;
  /** Whose parsed states to return: every file's (default) or the named files' only. */
  statesOf?: "all" | ReadonlySet<string>;
  /** The cache's version key (tests; default the running pbxctl's). */
  cacheVersion?: string;
  /** The time the run starts (the stat index's racy window); default the system clock. */
  clock?: Clock;
}

export interface OrgFilesLoad {
  /** The states asked for, of files that loaded, in the files' order. */
  orgs: LoadedOrg[];
  /** Every file that loaded (with or without errors), in the files' order. */
  summaries: SummarizedFile[];
  /** Every problem of every file and across files, sorted by file, line and column. */
  diagnostics: SourceDiagnostic[];
  /** The problems across files alone (also in `diagnostics`). */
  crossFile: SourceDiagnostic[];
  /** With `lint`: the findings (as warnings) of the files without errors, file by file. */
  lint: SourceDiagnostic[];
  /** The claims index the checks across files used, and the files as it took them. */
  claims?: { index: ClaimsIndex; files: readonly RunFile[] } | undefined;
  /**
   * Analyzes again the file whose cache entry was found corrupted when its summary was read
   * after the load (`summaries`' getters throw CorruptedCacheEntry): the summary then reads the
   * new analysis. The caller runs again what threw.
   */
  recover(error: CorruptedCacheEntry): Promise<void>;
}

/**
 * A plain cache entry's analysis, read only when its summary was asked for, did not read back
 * (its bytes are not as written): the file must be analyzed again (`OrgFilesLoad.recover`).
 */
export class CorruptedCacheEntry extends Error {
  constructor(
    /** The file's index among the load's inputs. */
    readonly index: number,
    /** The load that can recover it. */
    readonly load: object,
  ) {
    super("a cache entry read after the load is corrupted");
  }
}

/**
 * `read()`, which reads the summaries of `load`: run again after the file of a cache entry
 * found corrupted on the way is analyzed again.
 */
export async function readingSummaries<T>(load: OrgFilesLoad, read: () => T): Promise<T> {
  for (;;) {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof CorruptedCacheEntry)) throw error;
      await load.recover(error);
    }
  }
}

/** These org files on disk (read when needed), each cached beside itself. */
export function orgFileInputs(files: readonly string[]): OrgFileInput[] {
  return files.map((file) => ({ file, cacheDir: dirname(file) }));
}

/** What an org file on disk holds, or the loader's error for it. */
function fromDisk<T>(file: string, read: (file: string) => T): T {
  try {
    return read(file);
  } catch {
    throw new OrgFileError(`${file}: cannot be read`);
  }
}

/** Loads the org files named by `paths` (files, or directories one level deep); see `loadOrgFileInputs`. */
export async function loadOrgFiles(
  paths: readonly string[],
  options: LoadOrgFilesOptions,
): Promise<OrgFilesLoad> {
  return loadOrgFileList(await orgFilePaths(paths), options);
}

/** Loads these org files (paths of files, as `orgFilePaths` lists them); see `loadOrgFileInputs`. */
export async function loadOrgFileList(
  files: readonly string[],
  options: LoadOrgFilesOptions,
): Promise<OrgFilesLoad> {
  const caches = new Map<string, OrgFileCache>();
  if (options.cache) {
    for (const dir of new Set(files.map((file) => dirname(file)))) {
      caches.set(dir, await OrgFileCache.open(dir, options.cacheVersion));
    }
  }
  // When every file will be parsed (nothing cached, or every state asked for), workers start
  // now and load their modules while the files are read.
  const cold =
    options.statesOf === undefined ||
    options.statesOf === "all" ||
    [...caches.values()].every((cache) => cache.empty);
  const pool =
    cold && worthWorkers(files.length, options)
      ? startAnalysisPool(Math.min(poolThreads(options), files.length))
      : undefined;
  try {
    return await loadOrgFileInputs(orgFileInputs(files), { ...options, pool, caches });
  } finally {
    await pool?.close();
  }
}

/**
 * Loads these org files: each file's problems, the checks across all of them, and the states
 * `statesOf` asks for. Errors are returned, not thrown (the caller decides what they stop).
 */
export async function loadOrgFileInputs(
  inputs: readonly OrgFileInput[],
  options: LoadOrgFilesOptions & {
    pool?: AnalysisPool | undefined;
    /** Caches already opened, by directory. */
    caches?: Map<string, OrgFileCache>;
  },
): Promise<OrgFilesLoad> {
  const lint = options.lint ?? false;
  const wantsState = (file: string) =>
    options.statesOf === undefined || options.statesOf === "all" || options.statesOf.has(file);
  const caches = options.caches ?? new Map<string, OrgFileCache>();
  const cacheOf = async (input: OrgFileInput): Promise<OrgFileCache | undefined> => {
    if (!options.cache || input.cacheDir === null) return undefined;
    let cache = caches.get(input.cacheDir);
    if (!cache) {
      cache = await OrgFileCache.open(input.cacheDir, options.cacheVersion);
      caches.set(input.cacheDir, cache);
    }
    return cache;
  };

  const runStart = (options.clock ?? systemClock)().getTime();
  const analyses: (OrgFileAnalysis | CachedEntry)[] = new Array(inputs.length);
  const hashes: string[] = new Array(inputs.length);
  // The text of each file read so far (a file on disk is read at most once).
  const texts: (string | Buffer | undefined)[] = inputs.map((input) => input.text);
  const textAt = (index: number): string | Buffer =>
    (texts[index] ??= fromDisk(inputs[index]!.file, readFileSync));
  const toAnalyze: { index: number; states: boolean }[] = [];
  for (const [index, input] of inputs.entries()) {
    const cache = await cacheOf(input);
    const states = wantsState(input.file);
    if (cache) {
      hashes[index] = hashOf(input, cache, textAt, index, runStart);
      const hit = states ? undefined : cache.get(hashes[index], lint);
      if (hit) {
        analyses[index] = hit;
        continue;
      }
      // The stat index's hash has no sound entry: the text decides (read and hashed anew).
      if (texts[index] === undefined) hashes[index] = contentHash(textAt(index));
    }
    toAnalyze.push({ index, states });
  }
  const analyze = async (batch: readonly { index: number; states: boolean }[], states: boolean) => {
    const sources = batch.map(({ index }) => ({
      file: inputs[index]!.file,
      text: decoded(textAt(index)),
    }));
    const batchCaches = await Promise.all(batch.map(({ index }) => cacheOf(inputs[index]!)));
    // Each file's own work (its cache entry, its claims' index lines) as its analysis comes:
    // done while the other threads still parse, not after the last file.
    const onAnalysis = (k: number, analysis: OrgFileAnalysis) => {
      const { index } = batch[k]!;
      analyses[index] = analysis;
      batchCaches[k]?.put(hashes[index]!, analysis, lint);
      if (options.cache && analysis.summary !== null) prepareClaims(analysis.summary);
    };
    await analyzeSources(sources, { ...options, lint, states, onAnalysis });
  };
  for (const states of [true, false]) {
    await analyze(
      toAnalyze.filter((entry) => entry.states === states),
      states,
    );
  }
  // The caches are written while the checks across files run (their fsyncs overlap that work).
  // A recovery changes a cache only after that write, and writes it again itself.
  const saveCaches = () =>
    Promise.all([...caches.values()].map((cache) => cache.save())).then(() => {});
  let saving = saveCaches();
  // Awaited below; until then a failure is not an unhandled rejection.
  saving.catch(() => {});
  const index = options.cache ? await claimsIndexOf(inputs, cacheOf) : undefined;
  const handle = {};
  // A plain entry's analysis is first read when a clash is placed in its file: if it does not
  // read back, that file is analyzed again (from its text: the hash the stat index gave is
  // the text's) and the checks run again.
  const recover = async (error: CorruptedCacheEntry) => {
    if (error.load !== handle) throw error;
    // The write under way finishes first: what changes now is the next write's.
    await saving;
    const input = inputs[error.index]!;
    const cache = await cacheOf(input);
    cache?.drop(hashes[error.index]!);
    if (cache) hashes[error.index] = contentHash(textAt(error.index));
    await analyze([{ index: error.index, states: false }], false);
    saving = saveCaches();
    await saving;
  };
  let load: ReturnType<typeof finishLoad>;
  for (;;) {
    try {
      load = finishLoad(inputs, analyses, hashes, options.env, lint, index, handle);
      break;
    } catch (error) {
      if (!(error instanceof CorruptedCacheEntry)) throw error;
      await recover(error);
    }
  }
  await Promise.all([index?.record(load.runFiles), saving]);
  const { runFiles: _runFiles, ...result } = load;
  return { ...result, recover };
}

/**
 * The claims index the checks across these files use: when they are all in one cached
 * directory (the index names files by their names there) and there are two or more.
 */
async function claimsIndexOf(
  inputs: readonly OrgFileInput[],
  cacheOf: (input: OrgFileInput) => Promise<OrgFileCache | undefined>,
): Promise<ClaimsIndex | undefined> {
  if (inputs.length < 2) return undefined;
  const dir = inputs[0]!.cacheDir;
  if (dir === null || inputs.some((input) => input.cacheDir !== dir)) return undefined;
  return (await cacheOf(inputs[0]!))?.claimsIndex();
}

function finishLoad(
  inputs: readonly OrgFileInput[],
  found: readonly (OrgFileAnalysis | CachedEntry)[],
  hashes: readonly (string | undefined)[],
  env: SecretEnvironment,
  lint: boolean,
  index: ClaimsIndex | undefined,
  /** Names the load in the CorruptedCacheEntry a cached summary throws. */
  load: object,
): Omit<OrgFilesLoad, "recover"> & { runFiles: RunFile[] } {
  const orgs: LoadedOrg[] = [];
  const summaries: SummarizedFile[] = [];
  const runFiles: RunFile[] = [];
  const perFile: SourceDiagnostic[] = [];
  // A plain cache entry has nothing to report: only its keys take part, its analysis is read
  // when a clash is reported about it (most of 10,000 files on a warm run).
  const analyses = found.map((entry, index) =>
    entry instanceof CachedEntry && entry.plain ? entry : analysisOf(entry, index, load),
  );
  for (const [index, input] of inputs.entries()) {
    const analysis = analyses[index]!;
    const runFile: RunFile = {
      name: basename(input.file),
      hash: hashes[index] ?? null,
      summarized: null,
    };
    runFiles.push(runFile);
    if (analysis instanceof CachedEntry) {
      runFile.summarized = cachedSummary(input.file, found, index, load);
      summaries.push(runFile.summarized);
      continue;
    }
    const state = "state" in analysis ? analysis.state : null;
    const loaded = finishOrgFile(input.file, { ...analysis, state }, env);
    perFile.push(...loaded.diagnostics);
    if (analysis.summary === null) continue;
    runFile.summarized = { file: input.file, summary: analysis.summary };
    summaries.push(runFile.summarized);
    if (loaded.state) orgs.push({ file: input.file, state: loaded.state });
  }
  const crossFile = index ? index.problems(runFiles) : crossOrgProblems(summaries);
  const diagnostics = sortDiagnostics([...perFile, ...crossFile]);
  const findings: SourceDiagnostic[] = [];
  if (lint) {
    // A file with errors gets them fixed first; lint guesses about it would be noise.
    const withErrors = new Set(
      diagnostics.filter((d) => d.severity === "error").map((d) => d.file),
    );
    for (const [index, input] of inputs.entries()) {
      if (withErrors.has(input.file)) continue;
      const analysis = analyses[index]!;
      if (analysis instanceof CachedEntry) continue;
      const extra: PlacedDiagnostic[] = analysis.extra;
      for (const finding of extra)
        findings.push({ ...finding, severity: "warning", file: input.file });
    }
  }
  const claims = index && { index, files: runFiles };
  return { orgs, summaries, diagnostics, crossFile, lint: findings, claims, runFiles };
}

/** The whole analysis of a fresh or cached file (the `index`-th of `load`). */
function analysisOf(
  entry: OrgFileAnalysis | CachedEntry,
  index: number,
  load: object,
): OrgFileAnalysis | CachedAnalysis {
  if (!(entry instanceof CachedEntry)) return entry;
  const analysis = entry.analysis();
  if (!analysis) throw new CorruptedCacheEntry(index, load);
  return analysis;
}

/**
 * A plain cached file's summary (the `index`-th of `found`): its keys read when asked for, the
 * rest read from the pack if asked for; once the file was analyzed again (`recover`), the new
 * analysis's.
 */
function cachedSummary(
  file: string,
  found: readonly (OrgFileAnalysis | CachedEntry)[],
  index: number,
  load: object,
): SummarizedFile {
  return {
    file,
    get keys() {
      const entry = found[index]!;
      return entry instanceof CachedEntry ? entry.keys! : summaryKeys(entry.summary!);
    },
    get summary() {
      return analysisOf(found[index]!, index, load).summary!;
    },
  };
}

/**
 * The hash of a file's text: from the cache's stat index when the file on disk is unchanged
 * since it was recorded, else of the text (read now; its stat, taken first, is recorded).
 */
function hashOf(
  input: OrgFileInput,
  cache: OrgFileCache,
  textAt: (index: number) => string | Buffer,
  index: number,
  runStart: number,
): string {
  if (input.text !== undefined) return contentHash(input.text);
  const stamp = fromDisk(input.file, (file) => statSync(file));
  const name = basename(input.file);
  const known = cache.knownHash(name, stamp);
  if (known !== undefined) return known;
  const hash = contentHash(textAt(index));
  cache.recordStat(name, stamp, hash, runStart);
  return hash;
}

function decoded(text: string | Buffer): string {
  return typeof text === "string" ? text : text.toString("utf8");
}
