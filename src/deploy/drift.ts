// Drift: files of a unit changed on disk since the deploy that recorded them (edited by hand,
// overwritten by another writer, restored by a rollback the record did not see). Status compares
// each file's content hash with the hash recorded when the engine loaded it.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { AppliedRevision } from "./deploy-log.js";
import { contentHash } from "./revision.js";
import { listUnitFiles } from "./unit-files.js";
import { parseUnitId } from "./units.js";

export interface DriftedFile {
  path: string;
  /** `changed`: other content; `missing`: recorded, gone; `added`: on disk, never recorded. */
  change: "changed" | "missing" | "added";
}

export interface DriftOptions {
  /**
   * Hash every file. Without it a file whose size, mtime and inode still match the stamp taken
   * when it was written is taken as unchanged (every pbxctl write renames a new file into place).
   */
  refresh?: boolean;
}

/** The unit's files that differ from what `applied` recorded, sorted by path. */
export async function unitDrift(
  engineDir: string,
  applied: AppliedRevision,
  options: DriftOptions = {},
): Promise<DriftedFile[]> {
  const { paths } = await listUnitFiles(engineDir, parseUnitId(applied.unit));
  const onDisk = new Set(paths);
  const drifted: DriftedFile[] = [];
  for (const path of Object.keys(applied.files)) {
    if (!onDisk.has(path)) drifted.push({ path, change: "missing" });
  }
  await Promise.all(
    paths.map(async (path) => {
      const recorded = applied.files[path];
      if (recorded === undefined) {
        drifted.push({ path, change: "added" });
        return;
      }
      const file = join(engineDir, path);
      if (!options.refresh && (await stampMatches(file, applied.stats?.[path]))) return;
      const content = await readFile(file, "utf8").catch(() => null);
      if (content === null) drifted.push({ path, change: "missing" });
      else if (contentHash(content) !== recorded) drifted.push({ path, change: "changed" });
    }),
  );
  return drifted.sort((a, b) => (a.path < b.path ? -1 : 1));
}

async function stampMatches(
  file: string,
  stamp: NonNullable<AppliedRevision["stats"]>[string] | undefined,
): Promise<boolean> {
  if (!stamp) return false;
  const info = await stat(file).catch(() => null);
  return (
    info !== null &&
    info.size === stamp.size &&
    info.mtimeMs === stamp.mtimeMs &&
    info.ino === stamp.ino
  );
}
