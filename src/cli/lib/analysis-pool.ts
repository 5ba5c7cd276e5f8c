// Analyzing many org files on every core. Parsing YAML with source positions is most of the time
// of `validate`, `compile`, `plan` and `deploy` on a large repository, and each file parses on
// its own: this thread and worker threads take small batches from one queue (a thread slowed by
// a busy machine simply takes fewer), and every answer is put back at its file's index, so the
// result is in the files' order whatever the timing. This thread is one of the pool's threads:
// it would otherwise only wait, and one worker fewer is one isolate fewer to start, load the
// parser in and warm up (on 2 cores: this thread and one worker). Few files are analyzed in
// this thread alone: starting workers costs more than it saves.
import { availableParallelism } from "node:os";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import type { OrgSource } from "../../model/org-file-paths.js";
import type { OrgFileAnalysis } from "../../model/org-file-result.js";
import { startModuleWorker } from "../../module-worker.js";
import type { AnalysisRequest, AnalysisResponse } from "./load-worker.js";

const WORKER_URL = new URL(
  `./load-worker${extname(fileURLToPath(import.meta.url))}`,
  import.meta.url,
);

/** Files per message at most: small enough to balance busy cores, large enough to cost nothing. */
const MAX_BATCH = 16;

/**
 * Files this thread analyzes between two looks at the workers' answers: a worker whose batch is
 * answered waits at most this long for its next one (it has another in flight meanwhile).
 */
const LOCAL_BATCH = 4;

/** Batches sent to a worker and not yet answered, at most. */
const IN_FLIGHT = 2;

export interface AnalyzeOptions {
  /** Lint findings in each analysis's `extra`. */
  lint: boolean;
  /** Parsed states kept (otherwise `state` is null and only the summary says the org loaded). */
  states: boolean;
  /**
   * Called with each analysis (its source's index) as soon as it is made or arrives from a
   * worker, in any order: what the caller does with each file's analysis alone then overlaps the
   * other threads' parsing instead of following the last file.
   */
  onAnalysis?: ((index: number, analysis: OrgFileAnalysis) => void) | undefined;
}

export interface PoolOptions {
  /** Threads at most, this one included (default: the machine's parallelism, up to 8). */
  threads?: number;
  /** Below this many files everything is analyzed in this thread (default 48). */
  minFiles?: number;
}

/**
 * Worker threads started ahead of the work (their start-up overlaps reading the files), and this
 * thread's copy of the analysis loading meanwhile.
 */
export interface AnalysisPool {
  analyze(sources: readonly OrgSource[], options: AnalyzeOptions): Promise<OrgFileAnalysis[]>;
  close(): Promise<void>;
}

/** The thread count `threads` asks for on this machine (at least 1). */
export function poolThreads(options: PoolOptions = {}): number {
  return Math.max(1, options.threads ?? Math.min(availableParallelism(), 8));
}

/** Whether `files` files are worth worker threads under `options`. */
export function worthWorkers(files: number, options: PoolOptions = {}): boolean {
  return files >= (options.minFiles ?? 48) && poolThreads(options) >= 2;
}

/** The per-file analysis, loaded in this thread when a file is analyzed here. */
type LocalAnalysis = typeof import("./org-file-analysis.js");

/**
 * Starts a pool of `threads` threads: this one and `threads - 1` workers (none given work until
 * asked: they, and this thread, load their modules meanwhile).
 */
export function startAnalysisPool(threads: number): AnalysisPool {
  const local: Promise<LocalAnalysis> = import("./org-file-analysis.js");
  // Never an unhandled rejection when the pool is closed unused; `analyze` sees the failure.
  local.catch(() => {});
  const workers: Worker[] = Array.from({ length: Math.max(0, threads - 1) }, () => {
    const worker = startModuleWorker(WORKER_URL);
    // An idle pool never keeps the process alive (a command that failed before using it exits).
    worker.unref();
    return worker;
  });
  let closed = false;
  return {
    analyze: (sources, options) => runQueue(local, workers, sources, options),
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}

/**
 * The analyses of `sources`, in their order: on the given pool, else on a pool started for them
 * when they are many (and closed after), else in this thread.
 */
export async function analyzeSources(
  sources: readonly OrgSource[],
  options: AnalyzeOptions & PoolOptions & { pool?: AnalysisPool | undefined },
): Promise<OrgFileAnalysis[]> {
  if (sources.length === 0) return [];
  if (options.pool) return options.pool.analyze(sources, options);
  if (!worthWorkers(sources.length, options)) {
    // Loaded only when a file is analyzed here: a load answered from the cache never pays for
    // the YAML parser, the schema validator or the lint rules.
    const local = await import("./org-file-analysis.js");
    return sources.map((source, index) => {
      const analysis = analyzeHere(local, source, options);
      options.onAnalysis?.(index, analysis);
      return analysis;
    });
  }
  const pool = startAnalysisPool(Math.min(poolThreads(options), sources.length));
  try {
    return await pool.analyze(sources, options);
  } finally {
    await pool.close();
  }
}

/** One file's analysis in this thread, as a worker answers it. */
function analyzeHere(
  { analyzeOrgFile }: LocalAnalysis,
  source: OrgSource,
  options: AnalyzeOptions,
): OrgFileAnalysis {
  const analysis = analyzeOrgFile(source, options.lint);
  if (!options.states) analysis.state = null;
  return analysis;
}

function runQueue(
  /** This thread's analysis, still loading maybe: the workers get their batches meanwhile. */
  loading: Promise<LocalAnalysis>,
  workers: readonly Worker[],
  sources: readonly OrgSource[],
  options: AnalyzeOptions,
): Promise<OrgFileAnalysis[]> {
  const results: OrgFileAnalysis[] = new Array(sources.length);
  const threads = workers.length + 1;
  let next = 0;
  // The next batch's end. Batches shrink as the queue empties, so that no thread is left
  // finishing a large batch while the others have nothing to do; each worker has IN_FLIGHT
  // batches sent at a time, so it never waits for this thread between two of them.
  const take = (most: number): number => {
    const remaining = sources.length - next;
    const size = Math.max(1, Math.min(most, Math.ceil(remaining / (threads * 2 * IN_FLIGHT))));
    next = Math.min(sources.length, next + size);
    return next;
  };
  let pending = 0;
  let localDone = false;
  return new Promise((resolve, reject) => {
    let failed = false;
    const cleanups: (() => void)[] = [];
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      for (const cleanup of cleanups) cleanup();
      reject(error);
    };
    const finishIfDone = () => {
      if (failed || !localDone || pending > 0 || next < sources.length) return;
      for (const cleanup of cleanups) cleanup();
      resolve(results);
    };
    const send = (worker: Worker): boolean => {
      if (next >= sources.length) return false;
      const start = next;
      const end = take(MAX_BATCH);
      pending++;
      const request: AnalysisRequest = {
        id: start,
        sources: sources.slice(start, end),
        lint: options.lint,
        states: options.states,
      };
      worker.postMessage(request);
      return true;
    };
    for (const worker of workers) {
      const onMessage = (response: AnalysisResponse) => {
        pending--;
        if (!response.ok) return fail(new Error(response.message));
        try {
          response.analyses.forEach((analysis, k) => {
            results[response.id + k] = analysis;
            options.onAnalysis?.(response.id + k, analysis);
          });
        } catch (error) {
          return fail(error instanceof Error ? error : new Error(String(error)));
        }
        if (!send(worker)) finishIfDone();
      };
      const onError = (error: Error) => fail(error);
      const onExit = (code: number) =>
        fail(new Error(`org file loader thread exited with code ${code}`));
      worker.ref();
      worker.on("message", onMessage);
      worker.once("error", onError);
      worker.once("exit", onExit);
      cleanups.push(() => {
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        worker.unref();
      });
    }
    for (let round = 0; round < IN_FLIGHT; round++) for (const worker of workers) send(worker);
    // This thread's share: a few files at a time, then the workers' answers (and their next
    // batches) before the next few.
    const analyzeLocally = (local: LocalAnalysis) => {
      if (!failed && next < sources.length) {
        const start = next;
        const end = take(LOCAL_BATCH);
        try {
          for (let k = start; k < end; k++) {
            const analysis = analyzeHere(local, sources[k]!, options);
            results[k] = analysis;
            options.onAnalysis?.(k, analysis);
          }
        } catch (error) {
          return fail(error instanceof Error ? error : new Error(String(error)));
        }
        return void setImmediate(analyzeLocally, local);
      }
      localDone = true;
      finishIfDone();
    };
    loading.then(analyzeLocally, fail);
  });
}
