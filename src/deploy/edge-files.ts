// Writing the compiled edge for an operator: `pbxctl edge init` writes kamailio.cfg and its data
// files in the edge's directory, each written atomically, keeping existing files unless forced so
// a second run never silently replaces an operator's edge; `pbxctl deploy --nodes` (GitOps, the
// nodes file is the edge's source of truth) brings the directory and the running edge to what it
// compiled, after the engine trees.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic-files.js";
import { type EdgeTables, KAMAILIO_CFG, printEdgeData } from "../compiler/edge/index.js";
import type { CompiledFile } from "../compiler/types.js";
import {
  applyEdgeTables,
  type EdgeApplyResult,
  type EdgeReloadOptions,
  type EdgeRpc,
} from "./edge-apply.js";

export class EdgeFilesExist extends Error {
  override readonly name = "EdgeFilesExist";
}

/** Writes `files` under `dir`; refuses (before writing any) when one exists and not `force`. */
export async function writeEdgeFiles(
  dir: string,
  files: readonly CompiledFile[],
  force: boolean,
): Promise<string[]> {
  if (!force) {
    const existing = files.filter((file) => existsSync(join(dir, file.path)));
    if (existing.length > 0) {
      throw new EdgeFilesExist(
        `${existing.map((file) => join(dir, file.path)).join(", ")} already exist${existing.length === 1 ? "s" : ""}: pass --force to overwrite`,
      );
    }
  }
  for (const file of files) await writeFileAtomic(join(dir, file.path), file.content);
  return files.map((file) => file.path);
}

/** What `pbxctl deploy --nodes` did to the edge. */
export interface EdgeDeployResult {
  dir: string;
  /**
   * kamailio.cfg was absent or differed and was written: a running Kamailio reads it only when
   * it starts (listen addresses, probing), so it must be restarted to take it.
   */
  configChanged: boolean;
  /** The running edge's change, read back; null when not pushed (files only). */
  applied: EdgeApplyResult | null;
}

/**
 * Brings the edge in `dir` to `files` (kamailio.cfg and the data files `tables` print): the config
 * written when it differs, then the tables either pushed to the running edge over `rpc` and read
 * back (applyEdgeTables, which writes the data files first) or, with no `rpc`, written only.
 */
export async function deployEdge(
  dir: string,
  files: readonly CompiledFile[],
  tables: EdgeTables,
  rpc: EdgeRpc | null,
  reload: EdgeReloadOptions = {},
): Promise<EdgeDeployResult> {
  const config = files.find((file) => file.path === KAMAILIO_CFG);
  if (!config) throw new Error(`the compiled edge has no ${KAMAILIO_CFG}`);
  const path = join(dir, KAMAILIO_CFG);
  const current = existsSync(path) ? await readFile(path, "utf8") : null;
  const configChanged = current !== config.content;
  if (configChanged) await writeFileAtomic(path, config.content);
  if (rpc) return { dir, configChanged, applied: await applyEdgeTables(rpc, dir, tables, reload) };
  for (const file of printEdgeData(tables)) {
    await writeFileAtomic(join(dir, file.path), file.content);
  }
  return { dir, configChanged, applied: null };
}
