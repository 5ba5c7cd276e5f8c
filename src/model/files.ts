// Loading org files: YAML text -> OrgState with every problem placed at `file:line:col`. The
// order is fixed: syntax, schema (defaults filled), omitted fields, secrets, semantic rules,
// then the checks that span several org files (over each file's summary, org-summary.ts).
// Everything but the secrets depends on the file's text alone (`analyzeOrgSource`), so the CLI
// can cache it and run it in worker threads; `finishOrgFile` (org-file-result.ts) reads the
// secrets from the environment. Which files are read: org-file-paths.ts.
import type { Diagnostic } from "./diagnostic.js";
import { fillOmitted } from "./fill.js";
import {
  nodeFileSystem,
  type OrgFileSystem,
  type OrgSource,
  readOrgSources,
} from "./org-file-paths.js";
import {
  finishOrgFile,
  hasErrors,
  isRejected,
  type LoadedOrg,
  type LoadResult,
  type OrgFileAnalysis,
  type PlacedDiagnostic,
  placedFields,
  sortDiagnostics,
} from "./org-file-result.js";
import type { OrgState } from "./org-state.js";
import { crossOrgProblems, type SummarizedFile, summarizeOrg } from "./org-summary.js";
import { checkOrgFileSchema, OrgFileSchema, type SchemaDiagnostic } from "./schema-check.js";
import { type SecretEnvironment, type SecretReference, secretReferencesOf } from "./secrets.js";
import { validateOrg } from "./validate.js";
import { parseYaml, positionOf, type SourceDiagnostic, type YamlSource, yamlData } from "./yaml.js";

export { formatDiagnostic, type SourceDiagnostic, type SourcePosition } from "./diagnostic.js";
export * from "./org-file-paths.js";
export * from "./org-file-result.js";

/** More checks of a loaded org run while its file's positions are at hand (the CLI's lint). */
export type ExtraChecks = (state: OrgState) => Diagnostic[];

/**
 * Loads one org file's text. The state is null when the file is not valid YAML or does not
 * match the schema; otherwise it is complete (ids, context prefix, secrets resolved).
 */
export function loadOrgSource(
  source: OrgSource,
  env: SecretEnvironment,
): { state: OrgState | null; diagnostics: SourceDiagnostic[] } {
  return finishOrgFile(source.file, analyzeOrgSource(source), env);
}

/**
 * The environment-free part of loading `source`: syntax, schema (defaults filled), omitted
 * fields, the semantic rules, the secrets it names and its summary, every problem placed.
 */
export function analyzeOrgSource(source: OrgSource, extraChecks?: ExtraChecks): OrgFileAnalysis {
  const analysis: OrgFileAnalysis = {
    state: null,
    before: [],
    after: [],
    secrets: [],
    rejected: [],
    summary: null,
    extra: [],
  };
  const { source: yaml, problems } = parseYaml(source.text, source.file);
  analysis.before = problems.map((p) => ({ ...p, path: "" }));
  if (hasErrors(analysis.before)) return analysis;

  const read = yamlData(yaml, OrgFileSchema);
  if ("problem" in read) {
    analysis.before = [{ ...read.problem, path: "" }];
    return analysis;
  }
  const data = read.data;
  if (data === null || data === undefined) {
    const empty = { severity: "error" as const, path: "", message: "empty file: expected `org:`" };
    analysis.before.push(place(yaml, empty));
    return analysis;
  }
  const schema = checkOrgFileSchema(data);
  let references: SecretReference[] = [];
  let semantic: Diagnostic[] = [];
  try {
    const state = fillOmitted(data as OrgState);
    const found = secretReferencesOf(state);
    semantic = validateOrg(state);
    references = found;
  } catch (error) {
    // Only reachable when the data broke the schema in a way the rules cannot walk (a list
    // where a mapping belongs): the schema errors already say what is wrong.
    if (schema.length === 0) throw error;
  }
  if (schema.length > 0) {
    // Rules about an item the schema rejected would only guess at what it meant.
    analysis.rejected = [...new Set(schema.map((s) => itemOf(s.path)))];
    semantic = semantic.filter((d) => !isRejected(analysis.rejected, d.path));
  }
  analysis.before.push(...schema.map((d) => place(yaml, d)));
  analysis.after = semantic.map((d) => place(yaml, d));
  analysis.secrets = references.map((r) => ({ ...r, at: positionOf(yaml, r.path) }));
  if (schema.length === 0) {
    const state = data as OrgState;
    analysis.state = state;
    analysis.summary = summarizeOrg(state, (path) => positionOf(yaml, path));
    if (extraChecks) analysis.extra = extraChecks(state).map((d) => place(yaml, d));
  }
  return analysis;
}

/** Loads several org files, adding the checks that span files (ids, prefixes, slugs, DIDs). */
export function loadOrgSources(sources: readonly OrgSource[], env: SecretEnvironment): LoadResult {
  const orgs: LoadedOrg[] = [];
  const diagnostics: SourceDiagnostic[] = [];
  const summaries: SummarizedFile[] = [];
  for (const source of sources) {
    const analysis = analyzeOrgSource(source);
    const loaded = finishOrgFile(source.file, analysis, env);
    diagnostics.push(...loaded.diagnostics);
    if (loaded.state && analysis.summary) {
      orgs.push({ file: source.file, state: loaded.state });
      summaries.push({ file: source.file, summary: analysis.summary });
    }
  }
  diagnostics.push(...crossOrgProblems(summaries));
  return { orgs, diagnostics: sortDiagnostics(diagnostics) };
}

/** Reads and loads the org files named by these paths (files or directories). */
export async function loadOrgPaths(
  paths: readonly string[],
  env: SecretEnvironment,
  fs: OrgFileSystem = nodeFileSystem,
): Promise<LoadResult> {
  return loadOrgSources(await readOrgSources(paths, fs), env);
}

/** The list item a path lies in (`ivrs[0].options[1]` for `ivrs[0].options[1].digit`). */
function itemOf(path: string): string {
  const end = path.lastIndexOf("]");
  return end < 0 ? path.split(".")[0]! : path.slice(0, end + 1);
}

function place(source: YamlSource, d: SchemaDiagnostic): PlacedDiagnostic {
  return { ...placedFields(d), ...positionOf(source, d.path, { key: d.at === "key" }) };
}
