// The per-file work of loading an org file as the CLI does it, wherever it runs (a worker thread
// or this one): the model's environment-free analysis, plus the lint findings when asked.
import { lintOrg } from "../../compiler/lint.js";
import { analyzeOrgSource, type OrgFileAnalysis, type OrgSource } from "../../model/files.js";

/** `analyzeOrgSource`, with lint findings (docs/lint.md) in `extra` when `lint` is set. */
export function analyzeOrgFile(source: OrgSource, lint: boolean): OrgFileAnalysis {
  return analyzeOrgSource(source, lint ? lintOrg : undefined);
}
