// Worker thread of the parallel loader (parallel-load.ts): loads the org files it is handed,
// each on its own, and answers their results in the same order.
import { parentPort } from "node:worker_threads";
import { loadOrgSource, type OrgSource } from "../../model/files.js";
import type { SecretEnvironment } from "../../model/secrets.js";

export interface LoadRequest {
  sources: OrgSource[];
  env: SecretEnvironment;
}

export type LoadResponse =
  | { ok: true; results: ReturnType<typeof loadOrgSource>[] }
  | { ok: false; message: string };

parentPort?.once("message", ({ sources, env }: LoadRequest) => {
  let response: LoadResponse;
  try {
    response = { ok: true, results: sources.map((source) => loadOrgSource(source, env)) };
  } catch (error) {
    response = { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(response);
});
