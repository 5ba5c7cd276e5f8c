// Org files as they were at a git revision, for `plan --base` (the PR-review view).
import { realpath, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { type SimpleGit, simpleGit } from "simple-git";
import { type OrgSource, orgFilePaths } from "../../model/files.js";
import { CommandFailure } from "./base-command.js";

/**
 * The org files named by `paths` at revision `rev`: the files there now plus those of the named
 * directories that existed at `rev` only. A file missing at `rev` is left out (an org that did
 * not exist). Each source is reported as `<rev>:<path>`.
 */
export async function orgSourcesAtRevision(
  paths: readonly string[],
  rev: string,
): Promise<OrgSource[]> {
  const first = resolve(paths[0] ?? ".");
  const start = (await isDirectory(first)) ? first : dirname(first);
  let root: string;
  let git: SimpleGit;
  try {
    root = await realpath(
      (await simpleGit({ baseDir: start }).revparse(["--show-toplevel"])).trim(),
    );
    // Paths given to ls-tree and show below are relative to the repository root.
    git = simpleGit({ baseDir: root });
    // `--verify --quiet` fails silently, and simple-git does not treat a silent failure as one.
    if ((await git.revparse(["--verify", "--quiet", `${rev}^{commit}`])).trim() === "") {
      throw new Error("unknown revision");
    }
  } catch {
    throw new CommandFailure(`${rev}: not a revision of a git repository at ${start}`);
  }
  const inRepo = async (path: string) =>
    relative(root, await realpath(resolve(path)))
      .split(sep)
      .join("/");

  const files = new Map<string, string>(); // repo-relative path -> path as the user wrote it
  for (const file of await orgFilePaths(paths)) files.set(await inRepo(file), file);
  for (const path of paths) {
    if (!(await isDirectory(path))) continue;
    const dir = await inRepo(path);
    const listed = await git.raw([
      "ls-tree",
      "--name-only",
      rev,
      "--",
      dir === "" ? "." : `${dir}/`,
    ]);
    for (const name of listed.split("\n").filter((n) => /\.ya?ml$/.test(n))) {
      if (dirname(name) !== (dir === "" ? "." : dir)) continue;
      if (!files.has(name))
        files.set(name, join(path, name.slice(dir === "" ? 0 : dir.length + 1)));
    }
  }
  const sources: OrgSource[] = [];
  for (const [inRepoPath, shown] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    try {
      const text = await git.show([`${rev}:${inRepoPath}`]);
      sources.push({ file: `${rev}:${shown}`, text });
    } catch {
      // Not in the revision: the org did not exist then.
    }
  }
  return sources;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
