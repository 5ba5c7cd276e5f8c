// Flow assertions for `pbxctl test` and `pbxctl plan`: read the flow files of a directory, check
// each flow against the org that owns its DID, and say plainly which flows changed.
import { existsSync, statSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { checkFlow, flowOrg, flowReferenceProblems } from "../../compiler/flow-check.js";
import { formatDiagnostic, type SourceDiagnostic } from "../../model/files.js";
import type { Flow } from "../../model/flow-file.js";
import type { OrgState } from "../../model/org-state.js";

/** The directory name flow files live in, beside the org files. */
export const FLOWS_DIR = "flows";

export interface FlowResult {
  name: string;
  file: string;
  line: number;
  col: number;
  passed: boolean;
  failures: string[];
}

export interface FlowRun {
  results: FlowResult[];
  /** Problems in the flow files themselves (they keep a flow from being checked). */
  diagnostics: SourceDiagnostic[];
  passed: number;
  failed: number;
}

function defaultName(flow: Flow): string {
  return `call ${flow.call}${flow.press.length > 0 ? ` press ${flow.press.join(",")}` : ""}`;
}

/** The flow files (`*.yaml`, `*.yml`) of `dir`, sorted. */
export async function flowFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/** Checks every flow of `files` against `orgs`. */
export async function runFlows(
  files: readonly string[],
  orgs: readonly OrgState[],
): Promise<FlowRun> {
  const run: FlowRun = { results: [], diagnostics: [], passed: 0, failed: 0 };
  // Loaded with its schema validator (ajv) only when there are flows: `plan` without a flows
  // directory never pays for it.
  const { loadFlowFile } = await import("../../model/flow-file.js");
  for (const file of files) {
    const loaded = loadFlowFile(file, await readFile(file, "utf8"));
    run.diagnostics.push(...loaded.diagnostics);
    for (const located of loaded.flows) {
      const { flow } = located;
      const problem = (field: string, message: string): SourceDiagnostic => ({
        severity: "error",
        file,
        path: `${located.path}.${field}`,
        message,
        ...located.positionOf(field),
      });
      const state = flowOrg(orgs, flow);
      if (!state) {
        run.diagnostics.push(problem("call", `no org has an assigned, active DID ${flow.call}`));
        continue;
      }
      const references = flowReferenceProblems(state, flow);
      if (references.length > 0) {
        run.diagnostics.push(...references.map(([field, message]) => problem(field, message)));
        continue;
      }
      const check = checkFlow(state, flow);
      run.results.push({
        name: flow.name ?? defaultName(flow),
        file,
        line: located.line,
        col: located.col,
        passed: check.passed,
        failures: check.failures,
      });
      if (check.passed) run.passed += 1;
      else run.failed += 1;
    }
  }
  return run;
}

/** The flows directories beside these org paths: `<dir>/flows` of a directory, or of a file's. */
export function flowsDirsFor(orgPaths: readonly string[]): string[] {
  const dirs = orgPaths.map((path) => {
    const isDir = existsSync(path) && statSync(path).isDirectory();
    return join(isDir ? path : dirname(path), FLOWS_DIR);
  });
  return [...new Set(dirs)].filter((dir) => existsSync(dir) && statSync(dir).isDirectory());
}

/** The run as a person reads it: one line per flow, the reasons under a failing one, a total. */
export function formatFlowRun(run: FlowRun): string {
  const lines: string[] = run.diagnostics.map(formatDiagnostic);
  for (const result of run.results) {
    const where = `${result.file}:${result.line}:${result.col}`;
    lines.push(`${result.passed ? "PASS" : "FAIL"} ${result.name}  (${where})`);
    for (const failure of result.failures) lines.push(`     ${failure}`);
  }
  const invalid = run.diagnostics.filter((d) => d.severity === "error").length;
  lines.push(
    `Flows: ${run.passed} passed, ${run.failed} failed${invalid > 0 ? `, ${invalid} problem(s) in flow files` : ""}.`,
  );
  return lines.join("\n");
}

/** Whether the run says the configuration breaks an asserted flow (or could not check one). */
export function flowRunFailed(run: FlowRun): boolean {
  return run.failed > 0 || run.diagnostics.some((d) => d.severity === "error");
}
