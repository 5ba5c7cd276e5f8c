// Which org files a command reads: files as given, directories one level deep, through a narrow
// file-system interface; and the error for a path that cannot be read.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";

/** The text of one org file and the name it is reported under. */
export interface OrgSource {
  file: string;
  text: string;
}

/** A path given to the loader that cannot be read (not a problem inside a file). */
export class OrgFileError extends Error {
  override readonly name = "OrgFileError";
}

/** The narrow file access the loader needs; node:fs/promises by default. */
export interface OrgFileSystem {
  readFile(path: string): Promise<string>;
  /** Names in a directory, or null when `path` is a file. Throws when it does not exist. */
  listDirectory(path: string): Promise<string[] | null>;
}

export const nodeFileSystem: OrgFileSystem = {
  readFile: (path) => readFile(path, "utf8"),
  listDirectory: async (path) => ((await stat(path)).isDirectory() ? readdir(path) : null),
};

/** Files (`*.yaml`, `*.yml`) named by these paths: files as given, directories one level deep. */
export async function orgFilePaths(
  paths: readonly string[],
  fs: OrgFileSystem = nodeFileSystem,
): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    let names: string[] | null;
    try {
      names = await fs.listDirectory(path);
    } catch {
      throw new OrgFileError(`${path}: no such file or directory`);
    }
    if (names === null) files.push(path);
    else {
      // join() normalizes the whole path: once for the directory, not for each of 10,000 names
      // (a name read from a directory has no separator and is not "." or "..").
      const dir = join(path, "-").slice(0, -1);
      files.push(
        ...names
          .filter((name) => /\.ya?ml$/.test(name))
          .sort()
          .map((name) => `${dir}${name}`),
      );
    }
  }
  return [...new Set(files)];
}

/** The text of every org file named by these paths (files or directories). */
export async function readOrgSources(
  paths: readonly string[],
  fs: OrgFileSystem = nodeFileSystem,
): Promise<OrgSource[]> {
  const sources: OrgSource[] = [];
  for (const file of await orgFilePaths(paths, fs)) {
    try {
      sources.push({ file, text: await fs.readFile(file) });
    } catch {
      throw new OrgFileError(`${file}: cannot be read`);
    }
  }
  return sources;
}
