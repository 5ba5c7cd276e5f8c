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

/**
 * What the platform around the engine changes in an org's files (not the org's own config, so
 * not part of OrgState): the same org compiles differently behind a SIP edge.
 */
export interface OrgCompileOptions {
  /**
   * Phones register through the SIP edge (issue 26), which adds a Path header: every phone's AOR
   * gets `support_path=yes`, so Asterisk keeps the Path and sends its requests to the phone back
   * through the edge (without it Asterisk answers such a REGISTER 420). Default false.
   */
  behindEdge?: boolean;
}
