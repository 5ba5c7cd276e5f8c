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
import {
  parseYaml,
  positionOf,
  type SourceDiagnostic,
  type SourcePosition,
  yamlData,
} from "./yaml.js";
import { plainPositionOf, readPlainYaml } from "./yaml-plain.js";

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
  const { problems, read } = readOrgData(source);
  analysis.before = problems;
  if (!read) return analysis;
  const { data, locate } = read;
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
  analysis.before.push(...schema.map((d) => place(locate, d)));
  analysis.after = semantic.map((d) => place(locate, d));
  analysis.secrets = references.map((r) => ({ ...r, at: locate(r.path) }));
  if (schema.length === 0) {
    const state = data as OrgState;
    analysis.state = state;
    analysis.summary = summarizeOrg(state, (path) => locate(path));
    if (extraChecks) analysis.extra = extraChecks(state).map((d) => place(locate, d));
  }
  return analysis;
}

/** Where the value at a path of the file's data starts (positionOf). */
type Locate = (path: string, options?: { key?: boolean }) => SourcePosition;

/**
 * An org file's syntax problems, and its data with how to place its paths unless they stop it.
 * A plain file (nearly every one) is read from the parser's tokens; any other is composed by
 * the yaml package, which reports what is wrong with it (yaml-plain.ts).
 */
function readOrgData(source: OrgSource): {
  problems: PlacedDiagnostic[];
  read?: { data: unknown; locate: Locate };
} {
  const plain = readPlainYaml(source.text, OrgFileSchema);
  if (plain) {
    const locate: Locate = (path, options) => plainPositionOf(plain, path, options);
    return { problems: [], read: { data: plain.data, locate } };
  }
  const { source: yaml, problems } = parseYaml(source.text, source.file);
  const placed: PlacedDiagnostic[] = problems.map((p) => ({ ...p, path: "" }));
  if (hasErrors(placed)) return { problems: placed };
  const converted = yamlData(yaml, OrgFileSchema);
  if ("problem" in converted) return { problems: [{ ...converted.problem, path: "" }] };
  const locate: Locate = (path, options) => positionOf(yaml, path, options);
  if (converted.data === null || converted.data === undefined) {
    const empty = { severity: "error" as const, path: "", message: "empty file: expected `org:`" };
    return { problems: [...placed, place(locate, empty)] };
  }
  return { problems: placed, read: { data: converted.data, locate } };
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

function place(locate: Locate, d: SchemaDiagnostic): PlacedDiagnostic {
  return { ...placedFields(d), ...locate(d.path, { key: d.at === "key" }) };
}
