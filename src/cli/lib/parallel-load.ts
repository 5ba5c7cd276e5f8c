// Loading many org files on every core. Parsing YAML with source positions is most of the time
// of `validate`, `compile`, `plan` and `deploy` on a large repository (about 10 s for 1,000 org
// files on one core), and each file parses on its own: the files are split into contiguous
// chunks, one worker thread per chunk, and the checks that span files run here afterwards, so
// the result is exactly what `loadOrgSources` gives. Few files load in this thread: starting
// workers costs more than it saves.
import { availableParallelism } from "node:os";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import {
  combineLoads,
  type LoadResult,
  loadOrgSources,
  type OrgFileSystem,
  type OrgSource,
  readOrgSources,
} from "../../model/files.js";
import type { SecretEnvironment } from "../../model/secrets.js";
import { startModuleWorker } from "../../module-worker.js";
import type { LoadRequest, LoadResponse } from "./load-worker.js";

const WORKER_URL = new URL(
  `./load-worker${extname(fileURLToPath(import.meta.url))}`,
  import.meta.url,
);

export interface ParallelLoadOptions {
  /** Worker threads at most (default: the machine's parallelism, up to 8). */
  threads?: number;
  /** Below this many files everything loads in this thread (default 48). */
  minFiles?: number;
  fs?: OrgFileSystem;
}

/** Loads the org files named by `paths` like `loadOrgPaths`, spreading the parsing over threads. */
export async function loadOrgPathsInParallel(
  paths: readonly string[],
  env: SecretEnvironment,
  options: ParallelLoadOptions = {},
): Promise<LoadResult> {
  return loadOrgSourcesInParallel(await readOrgSources(paths, options.fs), env, options);
}

/** `loadOrgSources`, with the per-file work spread over worker threads. */
export async function loadOrgSourcesInParallel(
  sources: readonly OrgSource[],
  env: SecretEnvironment,
  options: ParallelLoadOptions = {},
): Promise<LoadResult> {
  const threads = Math.min(options.threads ?? Math.min(availableParallelism(), 8), sources.length);
  if (sources.length < (options.minFiles ?? 48) || threads < 2) {
    return loadOrgSources(sources, env);
  }
  // Only what the secrets of org files can name crosses to the workers: strings.
  const plainEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) plainEnv[name] = value;
  const size = Math.ceil(sources.length / threads);
  const chunks: OrgSource[][] = [];
  for (let start = 0; start < sources.length; start += size) {
    chunks.push(sources.slice(start, start + size));
  }
  const perChunk = await Promise.all(chunks.map((chunk) => loadInWorker(chunk, plainEnv)));
  return combineLoads(sources, perChunk.flat());
}

function loadInWorker(
  sources: OrgSource[],
  env: SecretEnvironment,
): Promise<(LoadResponse & { ok: true })["results"]> {
  return new Promise((resolve, reject) => {
    const worker = startModuleWorker(WORKER_URL);
    let answered = false;
    worker.once("message", (response: LoadResponse) => {
      answered = true;
      void worker.terminate();
      if (response.ok) resolve(response.results);
      else reject(new Error(response.message));
    });
    worker.once("error", (error) => {
      answered = true;
      reject(error);
    });
    worker.once("exit", (code) => {
      if (!answered) reject(new Error(`org file loader thread exited with code ${code}`));
    });
    worker.postMessage({ sources, env } satisfies LoadRequest);
  });
}
