// Which files of a deploy unit are on disk: shared by the deployer (which reads and replaces
// them) and `pbxctl status` (which checks them against what was recorded).
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { isTempFile } from "../atomic-files.js";
import { type DeployUnit, TOP_LEVEL_FILES, unitRoot } from "./units.js";

export interface UnitListing {
  /** The unit's files, relative to the engine directory, sorted. */
  paths: string[];
  /** Temp files left by interrupted writes (never part of the unit). */
  temps: string[];
}

/** Lists the unit's files under `engineDir` (a missing directory is an empty unit). */
export async function listUnitFiles(engineDir: string, unit: DeployUnit): Promise<UnitListing> {
  if (unit.kind === "top") {
    return {
      paths: TOP_LEVEL_FILES.filter((name) => existsSync(join(engineDir, name))).sort(),
      temps: [],
    };
  }
  const paths: string[] = [];
  const temps: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(join(engineDir, relative), { withFileTypes: true }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return [];
        throw error;
      },
    );
    await Promise.all(
      entries.map(async (entry) => {
        const path = `${relative}/${entry.name}`;
        if (entry.isDirectory()) return walk(path);
        if (!entry.isFile()) return;
        (isTempFile(entry.name) ? temps : paths).push(path);
      }),
    );
  };
  await walk(unitRoot(unit));
  return { paths: paths.sort(), temps };
}
