// What the compiler returns. Paths are relative to the engine config directory and use `/`.

/** A problem in user data (never a bug): errors stop a deploy, warnings are reported. */
export interface Diagnostic {
  severity: "error" | "warning";
  /** Where in the OrgState the problem is, e.g. `ivrs[1].options[0].action_destination`. */
  path: string;
  message: string;
}

export interface CompiledFile {
  path: string;
  content: string;
}

/** Files sorted by path; the same input always gives byte-identical output. */
export interface CompileResult {
  files: CompiledFile[];
  diagnostics: Diagnostic[];
}
