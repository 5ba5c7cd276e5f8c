// Starts a worker thread on one of our modules, built or not. Built code (dist/) starts the
// worker from its .js file. Under tsx (tests, development) the module is a .ts file, and on
// Node 20 a worker does not get the hooks that `--import tsx` installed in the main thread: the
// worker registers tsx itself first.
import { Worker, type WorkerOptions } from "node:worker_threads";

/** A worker running `moduleUrl` (a sibling module resolved with `import.meta.url`). */
export function startModuleWorker(moduleUrl: URL, options: WorkerOptions = {}): Worker {
  if (moduleUrl.pathname.endsWith(".js")) return new Worker(moduleUrl, options);
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then(({ register }) => {
    register();
    return import(${JSON.stringify(moduleUrl.href)});
  });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
