// Writing the compiled edge for an operator (`pbxctl edge init`): kamailio.cfg and its data files
// in the edge's directory, each written atomically; existing files are kept unless forced, so a
// second run never silently replaces an operator's edge.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic-files.js";
import type { CompiledFile } from "../compiler/index.js";

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
