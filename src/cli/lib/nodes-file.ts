// `--nodes` for `pbxctl compile` and `plan`: the GitOps nodes file (src/model/nodes-file.ts),
// loaded, checked against the org files, and compiled into the edge's `edge/` tree.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Flags } from "@oclif/core";
import {
  compileEdge,
  type EdgeListen,
  EdgeListenError,
  type EdgeTables,
  edgeStateFromOrgs,
} from "../../compiler/edge/index.js";
import type { CompiledFile } from "../../compiler/types.js";
import type { SourceDiagnostic } from "../../model/diagnostic.js";
import type { NodesFile } from "../../model/nodes-file.js";
import type { OrgState } from "../../model/org-state.js";
import { CommandFailure } from "./base-command.js";

/** The directory of the edge's files under `compile --out` (and `plan --against`). */
export const EDGE_DIR = "edge";

export const nodesFlag = {
  nodes: Flags.string({
    summary: `Nodes file (engine nodes, placements, the SIP edge; e.g. nodes.yaml): the edge's files under ${EDGE_DIR}/ too, and phones' AORs with support_path=yes.`,
  }),
};

/**
 * The nodes file to use: only the one `--nodes` names. Never found by itself, so a compile of
 * org files alone stays what it was.
 */
export function nodesFileOf(flag: string | undefined): string | null {
  return flag ?? null;
}

/**
 * The edge's files (paths under `edge/`) for `orgs` from the nodes file, every problem reported;
 * throws a CommandFailure when one is an error.
 */
export async function compileNodesFile(
  file: string,
  orgs: readonly OrgState[],
  report: (diagnostics: readonly SourceDiagnostic[]) => void,
): Promise<CompiledFile[]> {
  const { files } = await compileNodesEdge(file, orgs, report);
  return files.map((f) => ({ path: `${EDGE_DIR}/${f.path}`, content: f.content }));
}

/** The edge compiled from a nodes file: its files (paths in the edge's directory) and tables. */
export interface NodesFileEdge {
  files: CompiledFile[];
  tables: EdgeTables;
  /** The nodes file's `edge` part: where the edge's directory and JSON-RPC are. */
  listen: EdgeListen;
}

/** compileNodesFile's edge with its tables and listen part (for `deploy --nodes`). */
export async function compileNodesEdge(
  file: string,
  orgs: readonly OrgState[],
  report: (diagnostics: readonly SourceDiagnostic[]) => void,
): Promise<NodesFileEdge> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new CommandFailure(`${file}: ${(error as Error).message}`);
  }
  // Loaded with its schema validator (ajv) only with --nodes.
  const { checkPlacements, loadNodesFile } = await import("../../model/nodes-file.js");
  const { loaded, diagnostics } = loadNodesFile(file, text);
  const all = [...diagnostics];
  if (loaded) {
    all.push(
      ...checkPlacements(
        loaded,
        orgs.map((org) => ({
          id: org.org.id,
          name: org.org.name,
          active: org.org.status === "active",
        })),
      ),
    );
  }
  report(all);
  const errors = all.filter((d) => d.severity === "error").length;
  if (!loaded || errors > 0) {
    throw new CommandFailure(`${errors} error(s) in ${file}; nothing was compiled`);
  }
  const { edge, nodes, placements, carriers } = loaded.nodes;
  const listen: EdgeListen = {
    sip_address: edge.sip_address,
    sip_port: edge.sip_port,
    rpc_port: edge.rpc_port,
    data_dir: edge.data_dir,
    probe_interval: edge.probe_interval,
    register_expiry: edge.register_expiry,
  };
  let result: ReturnType<typeof compileEdge>;
  try {
    result = compileEdge(
      edgeStateFromOrgs(orgs, new Map(Object.entries(placements)), nodes, listen, carriers),
    );
  } catch (error) {
    if (error instanceof EdgeListenError) throw new CommandFailure(`${file}: ${error.message}`);
    throw error;
  }
  // The edge compiler's own problems (a host name it cannot admit, an unreachable address) are
  // about the nodes file's values: placed at its top, named by their path.
  const edgeProblems = result.diagnostics.map((d) => ({
    ...d,
    path: `edge: ${d.path}`,
    file,
    line: 1,
    col: 1,
  }));
  report(edgeProblems);
  if (edgeProblems.some((d) => d.severity === "error")) {
    throw new CommandFailure(`the edge compiler refused ${file}; nothing was compiled`);
  }
  return { files: result.files, tables: result.tables, listen };
}

/**
 * The nodes file's content for `apply --nodes` (placements are checked against the store there,
 * not against org files), every problem reported; throws a CommandFailure when one is an error.
 */
export async function readNodesFile(
  file: string,
  report: (diagnostics: readonly SourceDiagnostic[]) => void,
): Promise<NodesFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new CommandFailure(`${file}: ${(error as Error).message}`);
  }
  // Loaded with its schema validator (ajv) only with --nodes.
  const { loadNodesFile } = await import("../../model/nodes-file.js");
  const { loaded, diagnostics } = loadNodesFile(file, text);
  report(diagnostics);
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  if (!loaded || errors > 0) {
    throw new CommandFailure(`${errors} error(s) in ${file}; nothing was applied`);
  }
  return loaded.nodes;
}

/** The files under `<dir>/edge/` (for plan), as `edge/<path>` -> text. */
export async function readEdgeTree(
  dir: string,
  paths: readonly string[],
): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const path of paths) {
    const full = join(dir, path);
    if (existsSync(full)) files.set(path, await readFile(full, "utf8"));
  }
  return files;
}
