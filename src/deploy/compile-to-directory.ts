// A full compile written to a directory, one org at a time: the output of 1,000 orgs (over
// 100 MB) is never held at once, and writing overlaps compiling (tree-writer.ts).
//
// Files are overwritten in place. A staging directory renamed into place would make a refused
// compile write nothing, but creating 4,000 fresh files and renaming them over the old ones
// costs five times what overwriting does on ext4, and the orgs reaching here have passed
// validation, which already rejects what the compiler would refuse (name lengths follow from
// the schema's limits; DID clashes between files are checked by the loader). Should the
// compiler still refuse an org, writing stops there and the error says the tree is incomplete.
import {
  compileGateway,
  compileOrg,
  compileTopLevel,
  type Diagnostic,
  type OrgCompileOptions,
  type TopLevelOptions,
} from "../compiler/index.js";
import { type GatewayOptions, gatewayOrgOf, gatewayStateOf } from "../model/gateway.js";
import type { GatewayOrg, OrgState } from "../model/org-state.js";
import { TreeWriter } from "./tree-writer.js";

export interface WrittenFile {
  path: string;
  bytes: number;
}

/** The compiler refused some org; `written` files were written before it stopped. */
export class CompileRefused extends Error {
  constructor(
    readonly errors: Diagnostic[],
    readonly written: number,
  ) {
    const lines = errors.map((d) => `${d.path}: ${d.message}`).join("\n");
    super(
      `the compiler refused the input:\n${lines}` +
        (written > 0
          ? `\n${written} file(s) were written before it stopped: the tree is incomplete`
          : ""),
    );
  }
}

/**
 * Compiles every org of `orgs` (read once, in order), the gateway and the top-level include files
 * into `dir`, and answers the files written (sorted by path) and the compiler's warnings. Throws
 * `CompileRefused` when the compiler reports an error, after compiling every org so that all
 * errors are reported.
 */
export async function compileToDirectory(
  orgs: Iterable<OrgState>,
  gateway: GatewayOptions,
  dir: string,
  options: TopLevelOptions & OrgCompileOptions = {},
): Promise<{ files: WrittenFile[]; warnings: Diagnostic[] }> {
  const writer = new TreeWriter(dir);
  const files: WrittenFile[] = [];
  const errors: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  const take = async (result: { files: { path: string; content: string }[] }) => {
    if (errors.length > 0) return; // keep compiling to report every problem, stop writing
    for (const file of result.files) {
      files.push({ path: file.path, bytes: await writer.write(file.path, file.content) });
    }
  };
  const sortOut = (diagnostics: readonly Diagnostic[]) => {
    for (const d of diagnostics) (d.severity === "error" ? errors : warnings).push(d);
  };

  const prefixes: string[] = [];
  const gatewayOrgs: GatewayOrg[] = [];
  try {
    for (const state of orgs) {
      const result = compileOrg(state, { behindEdge: options.behindEdge ?? false });
      sortOut(result.diagnostics);
      await take(result);
      prefixes.push(state.org.context_prefix);
      const gatewayOrg = gatewayOrgOf(state);
      if (gatewayOrg) gatewayOrgs.push(gatewayOrg);
    }
    for (const result of [
      compileGateway(gatewayStateOf(gatewayOrgs, gateway)),
      compileTopLevel(
        prefixes,
        options.includeRoot === undefined ? {} : { includeRoot: options.includeRoot },
      ),
    ]) {
      sortOut(result.diagnostics);
      await take(result);
    }
  } finally {
    await writer.close();
  }
  if (errors.length > 0) throw new CompileRefused(errors, files.length);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, warnings };
}
