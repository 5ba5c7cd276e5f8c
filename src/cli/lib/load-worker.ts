// Worker thread of the analysis pool (analysis-pool.ts): analyzes each batch of org files it is
// handed and answers their analyses in the same order, until it is terminated. Only file texts
// come in: no environment, so no secret ever crosses to a worker.
import { parentPort } from "node:worker_threads";
import type { OrgFileAnalysis, OrgSource } from "../../model/files.js";
import { analyzeOrgFile } from "./org-file-analysis.js";

export interface AnalysisRequest {
  id: number;
  sources: OrgSource[];
  lint: boolean;
  /** Whether the parsed states come back (structured-cloning them costs as much as parsing). */
  states: boolean;
}

export type AnalysisResponse =
  | { id: number; ok: true; analyses: OrgFileAnalysis[] }
  | { id: number; ok: false; message: string };

parentPort?.on("message", ({ id, sources, lint, states }: AnalysisRequest) => {
  let response: AnalysisResponse;
  try {
    const analyses = sources.map((source) => {
      const analysis = analyzeOrgFile(source, lint);
      if (!states) analysis.state = null;
      return analysis;
    });
    response = { id, ok: true, analyses };
  } catch (error) {
    response = { id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(response);
});
