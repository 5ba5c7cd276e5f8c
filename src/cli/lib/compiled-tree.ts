// Compiled Asterisk files as a tree on disk: which paths pbxctl manages, reading them back, and
// compiling into memory for plan and deploy (pbxctl compile streams: deploy/compile-to-directory.ts).
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import {
  compileAll,
  compileGateway,
  compileOrg,
  compileTopLevel,
  TOP_LEVEL_FILES,
} from "../../compiler/index.js";
import type { CompiledFile, CompileResult, Diagnostic } from "../../compiler/types.js";
import type { GatewayOptions } from "../../model/gateway.js";
import type { GatewayState, OrgState } from "../../model/org-state.js";
import { CommandFailure } from "./base-command.js";

// The compiler's own list, so a new top-level file (voicemail.conf) is managed without a change here.
const TOP_LEVEL = new Set<string>(TOP_LEVEL_FILES);

/** Whether pbxctl owns this path of an engine config directory (others are left alone). */
export function isManagedPath(path: string): boolean {
  return TOP_LEVEL.has(path) || path.startsWith("gateway/") || path.startsWith("orgs/");
}

/** Every compiled file of these orgs and the gateway, as path -> text. Compiler errors throw. */
export function compileTree(
  orgs: readonly OrgState[],
  gateway: GatewayOptions,
  options: { includeRoot?: string | undefined; behindEdge?: boolean } = {},
): { files: Map<string, string>; warnings: Diagnostic[] } {
  return treeOf(
    compileAll(orgs, gateway, {
      ...(options.includeRoot === undefined ? {} : { includeRoot: options.includeRoot }),
      behindEdge: options.behindEdge ?? false,
    }),
  );
}

/**
 * Part of a tree, for a change that touched only some of it: the files of `orgs`, the gateway
 * file when `gateway` is given and the top-level files when `prefixes` (every org's) are.
 * Compiler errors throw, as in `compileTree`.
 */
export function compilePartialTree(
  orgs: readonly OrgState[],
  parts: { gateway: GatewayState | null; prefixes: readonly string[] | null },
  options: { includeRoot?: string | undefined } = {},
): { files: Map<string, string>; warnings: Diagnostic[] } {
  const results: CompileResult[] = orgs.map((org) => compileOrg(org));
  if (parts.gateway) results.push(compileGateway(parts.gateway));
  if (parts.prefixes) {
    const top = options.includeRoot === undefined ? {} : { includeRoot: options.includeRoot };
    results.push(compileTopLevel(parts.prefixes, top));
  }
  const files = results.flatMap((r) => r.files).sort((a, b) => (a.path < b.path ? -1 : 1));
  return treeOf({ files, diagnostics: results.flatMap((r) => r.diagnostics) });
}

function treeOf(result: CompileResult): { files: Map<string, string>; warnings: Diagnostic[] } {
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    const lines = errors.map((d) => `${d.path}: ${d.message}`).join("\n");
    throw new CommandFailure(`the compiler refused the input:\n${lines}`);
  }
  return {
    files: new Map(result.files.map((f: CompiledFile) => [f.path, f.content])),
    warnings: result.diagnostics.filter((d) => d.severity !== "error"),
  };
}

/** The managed files under `dir` (paths relative to it, with `/`). The directory must exist. */
export async function readManagedTree(dir: string): Promise<Map<string, string>> {
  try {
    if (!(await stat(dir)).isDirectory()) throw new Error();
  } catch {
    throw new CommandFailure(`${dir}: not a directory`);
  }
  const files = new Map<string, string>();
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    const path = relative(dir, full).split(sep).join("/");
    if (isManagedPath(path)) files.set(path, await readFile(full, "utf8"));
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
