// What the compiler returns. Paths are relative to the engine config directory and use `/`.

import type { Diagnostic } from "../model/diagnostic.js";

export type { Diagnostic } from "../model/diagnostic.js";

export interface CompiledFile {
  path: string;
  content: string;
}

/** Files sorted by path; the same input always gives byte-identical output. */
export interface CompileResult {
  files: CompiledFile[];
  diagnostics: Diagnostic[];
}
