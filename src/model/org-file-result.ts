// The last, environment-dependent step of loading an org file and the shapes it works on: an
// analysis (everything the text alone decides, files.ts) is finished by reading the secrets it
// names and naming its problems by file. Kept apart from the parser so that a load answered
// from the cache never loads the YAML parser or the schema validator.
import type { Diagnostic, SourceDiagnostic, SourcePosition } from "./diagnostic.js";
import { isWithin } from "./diagnostic-path.js";
import type { OrgState } from "./org-state.js";
import type { OrgSummary } from "./org-summary.js";
import {
  applySecrets,
  readSecretReferences,
  type SecretEnvironment,
  type SecretReference,
} from "./secrets.js";

/** An org that loaded far enough to have a state (it may still carry semantic errors). */
export interface LoadedOrg {
  file: string;
  state: OrgState;
}

export interface LoadResult {
  orgs: LoadedOrg[];
  /** Every problem of every file, sorted by file, line and column. */
  diagnostics: SourceDiagnostic[];
}

/** Whether any diagnostic is an error (warnings do not stop a compile). */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** A diagnostic placed in a file whose name is added when the file is finished loading. */
export type PlacedDiagnostic = Omit<SourceDiagnostic, "file">;

/** A secret reference placed where a problem with it is reported. */
export type PlacedSecretReference = SecretReference & { at: SourcePosition };

/**
 * Everything about one org file's text that does not depend on the environment or on other
 * files: what the loader does before reading secrets, kept apart so it can be cached by the
 * text's hash. `state` has its secrets unresolved; the rest is plain JSON.
 */
export interface OrgFileAnalysis {
  /** Null when the file is not valid YAML or does not match the schema. */
  state: OrgState | null;
  /** Syntax and schema problems (reported before the secrets' ones at the same place). */
  before: PlacedDiagnostic[];
  /** The semantic rules' problems. */
  after: PlacedDiagnostic[];
  secrets: PlacedSecretReference[];
  /** The list items the schema rejected: no other rule reports inside them. */
  rejected: string[];
  /** Null exactly when the org did not load (the state is then null, or left out). */
  summary: OrgSummary | null;
  /** What `extraChecks` found (lint findings), placed; not part of the load's diagnostics. */
  extra: PlacedDiagnostic[];
}

/**
 * One file's load result from its analysis: the secrets read from `env` (set into the state, in
 * place) and every diagnostic, sorted and named by `file`.
 */
export function finishOrgFile(
  file: string,
  analysis: OrgFileAnalysis,
  env: SecretEnvironment,
): { state: OrgState | null; diagnostics: SourceDiagnostic[] } {
  const { diagnostics: secretProblems, secrets } = readSecretReferences(analysis.secrets, env);
  const at = new Map(analysis.secrets.map((r) => [r.path, r.at]));
  const placedSecrets = secretProblems
    .filter((d) => !isRejected(analysis.rejected, d.path))
    .map((d) => ({ ...placedFields(d), ...at.get(d.path)! }));
  if (analysis.state) applySecrets(analysis.state, secrets);
  const diagnostics = sortDiagnostics(
    [...analysis.before, ...placedSecrets, ...analysis.after].map((d) => ({ ...d, file })),
  );
  return { state: analysis.state, diagnostics };
}

/** Whether `path` lies in one of the `rejected` list items. */
export function isRejected(rejected: readonly string[], path: string): boolean {
  return rejected.some((item) => isWithin(path, item));
}

/** Sorts by file, line and column; stable, so problems at one place keep their order. */
export function sortDiagnostics<T extends PlacedDiagnostic & { file: string }>(
  diagnostics: T[],
): T[] {
  return diagnostics.sort(
    (a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.line - b.line || a.col - b.col,
  );
}

/** A diagnostic's own fields, ready to be placed (its `kind` is the API's concern). */
export function placedFields(d: Diagnostic): Omit<Diagnostic, "kind"> {
  return {
    severity: d.severity,
    path: d.path,
    message: d.message,
    ...(d.hint ? { hint: d.hint } : {}),
  };
}
