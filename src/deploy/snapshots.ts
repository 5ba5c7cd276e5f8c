// What the deployer keeps beside an engine directory about each unit (STATE_DIR): the snapshot of
// the files deployed before the current ones, which `rollback` restores, and the file stamps
// (size, mtime, inode) recorded when the engine loaded a revision, which let a deploy that
// changes nothing skip a reload without trusting content alone (a file edited by hand and put
// back keeps its content but not its stamp).
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic-files.js";
import type { CompiledFile } from "../compiler/types.js";
import { type AppliedRevision, type FileStamp, STATE_DIR } from "./deploy-log.js";
import { type DeployUnit, unitId } from "./units.js";

/** A unit's files as they were before its last deploy, with the revision they were. */
export interface Snapshot {
  unit: string;
  revision: string;
  savedAt: string;
  files: CompiledFile[];
}

/** Where the unit's snapshot is kept in `engineDir`. */
export function snapshotFile(engineDir: string, unit: DeployUnit): string {
  const name = unit.kind === "org" ? `orgs/${unit.prefix}` : unit.kind;
  return join(engineDir, STATE_DIR, "previous", `${name}.json`);
}

/** Keeps `disk` (the unit's files by relative path, of `revision`) as the unit's snapshot. */
export async function saveSnapshot(
  engineDir: string,
  unit: DeployUnit,
  disk: ReadonlyMap<string, string>,
  revision: string,
  savedAt: string,
): Promise<void> {
  const snapshot: Snapshot = {
    unit: unitId(unit),
    revision,
    savedAt,
    files: [...disk.entries()]
      .map(([path, content]) => ({ path, content }))
      .sort((a, b) => (a.path < b.path ? -1 : 1)),
  };
  await writeFileAtomic(snapshotFile(engineDir, unit), JSON.stringify(snapshot));
}

/** The unit's snapshot; null when none was kept. */
export async function readSnapshot(engineDir: string, unit: DeployUnit): Promise<Snapshot | null> {
  const text = await readOptional(snapshotFile(engineDir, unit));
  return text === null ? null : (JSON.parse(text) as Snapshot);
}

/** Size, mtime and inode of each file (paths relative to `engineDir`). */
export async function fileStamps(
  engineDir: string,
  paths: readonly string[],
): Promise<Record<string, FileStamp>> {
  const entries = await Promise.all(
    paths.map(async (path) => {
      const info = await stat(join(engineDir, path));
      return [path, { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino }] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/** Whether every file on disk has the size and mtime recorded when the engine loaded it. */
export async function stampsMatch(
  engineDir: string,
  applied: AppliedRevision,
  disk: ReadonlyMap<string, string>,
): Promise<boolean> {
  const recorded = applied.stats;
  if (!recorded || Object.keys(recorded).length !== disk.size) return false;
  try {
    const now = await fileStamps(engineDir, [...disk.keys()]);
    return Object.entries(now).every(
      ([path, stamp]) =>
        recorded[path]?.size === stamp.size &&
        recorded[path]?.mtimeMs === stamp.mtimeMs &&
        recorded[path]?.ino === stamp.ino,
    );
  } catch {
    return false;
  }
}

/** A file's text; null when it does not exist. */
export async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}
