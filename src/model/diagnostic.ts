// A problem found in an org's data. The compiler and validation both report these, so the type
// lives in the model, which both may import (never the other way round).

/** A problem in user data (never a bug): errors stop a deploy, warnings are reported. */
export interface Diagnostic {
  severity: "error" | "warning";
  /** Where in the OrgState the problem is, e.g. `ivrs[1].options[0].action_destination`. */
  path: string;
  message: string;
  /** What would be accepted, in words (the CLI shows it after the message; the API's §7 message stays exact). */
  hint?: string;
  /**
   * `conflict`: the data clashes with something the org already has (SPEC.md §7's extension
   * collisions), which the API answers with 409 instead of 400. Absent: a plain invalid value.
   */
  kind?: "conflict";
}

/** A 1-based line and column in a source file. */
export interface SourcePosition {
  line: number;
  col: number;
}

/** A diagnostic placed in its file. */
export interface SourceDiagnostic extends Diagnostic, SourcePosition {
  file: string;
}

/** `file:line:col path: message` (warnings say so after the path). */
export function formatDiagnostic(d: SourceDiagnostic): string {
  const where = `${d.file}:${d.line}:${d.col}`;
  const message = d.hint ? `${d.message} (${d.hint})` : d.message;
  const what = d.severity === "warning" ? `warning: ${message}` : message;
  return d.path === "" ? `${where}: ${what}` : `${where} ${d.path}: ${what}`;
}
