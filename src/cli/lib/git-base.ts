// Org files as they were at a git revision, for `plan --base` (the PR-review view): only the
// files a change touched are read from git (one diff names them); the others are the same on
// both sides.
import { realpath, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { type SimpleGit, simpleGit } from "simple-git";
import { type OrgSource, orgFilePaths } from "../../model/org-file-paths.js";
import { CommandFailure } from "./base-command.js";

/** What `plan --base` needs of git: which org files differ from `rev`, and those as they were. */
export interface RevisionChanges {
  /** Every org file now or at `rev`, as the user would name it, in repository path order. */
  files: string[];
  /** The files whose text differs between `rev` and the working tree (added, changed, removed). */
  changed: Set<string>;
  /** The changed files as they were at `rev` (one added since is not there), `<rev>:<path>`. */
  before: OrgSource[];
}

/**
 * The org files named by `paths` (files, and the files of the named directories now or at
 * `rev`) and which of them differ at `rev`; only those are read from git.
 */
export async function changesSinceRevision(
  paths: readonly string[],
  rev: string,
): Promise<RevisionChanges> {
  const first = resolve(paths[0] ?? ".");
  const start = (await isDirectory(first)) ? first : dirname(first);
  let root: string;
  let git: SimpleGit;
  try {
    root = await realpath(
      (await simpleGit({ baseDir: start }).revparse(["--show-toplevel"])).trim(),
    );
    // Paths given to ls-tree, diff and show below are relative to the repository root.
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
  // Files by their directory's real path: one realpath per directory, not per file (10,000
  // files share a few directories); git tracks a symbolic link by its own name anyway.
  const realDirs = new Map<string, Promise<string>>();
  const inRepoFile = async (file: string) => {
    const full = resolve(file);
    let dir = realDirs.get(dirname(full));
    if (!dir) {
      dir = realpath(dirname(full));
      realDirs.set(dirname(full), dir);
    }
    return relative(root, join(await dir, basename(full)))
      .split(sep)
      .join("/");
  };

  const files = new Map<string, string>(); // repo-relative path -> path as the user wrote it
  for (const file of await orgFilePaths(paths)) files.set(await inRepoFile(file), file);
  const scope: string[] = [];
  const directories: { path: string; inRepo: string }[] = [];
  for (const path of paths) {
    const inRepoPath = await inRepo(path);
    scope.push(inRepoPath === "" ? "." : inRepoPath);
    if (await isDirectory(path)) directories.push({ path, inRepo: inRepoPath });
  }
  // One diff of the whole scope against the working tree, plus files git does not track yet.
  // An org file at the revision that is not in the working tree was removed since: the diff
  // names it, so the revision's tree is never listed (10,000 names for a one-file change).
  const differing = new Set(
    [
      await git.raw(["diff", "--name-only", "--no-renames", rev, "--", ...scope]),
      await git.raw(["ls-files", "--others", "--exclude-standard", "--", ...scope]),
    ]
      .join("\n")
      .split("\n")
      .filter((name) => name !== ""),
  );
  for (const name of differing) {
    if (files.has(name) || !/\.ya?ml$/.test(name)) continue;
    const dir = directories.find((d) => dirname(name) === (d.inRepo === "" ? "." : d.inRepo));
    if (dir)
      files.set(name, join(dir.path, name.slice(dir.inRepo === "" ? 0 : dir.inRepo.length + 1)));
  }
  const ordered = [...files].sort(([a], [b]) => (a < b ? -1 : 1));
  const changed = new Set<string>();
  const before: OrgSource[] = [];
  for (const [inRepoPath, shown] of ordered) {
    if (!differing.has(inRepoPath)) continue;
    changed.add(shown);
    try {
      const text = await git.show([`${rev}:${inRepoPath}`]);
      before.push({ file: `${rev}:${shown}`, text });
    } catch {
      // Not in the revision: the org did not exist then.
    }
  }
  return { files: ordered.map(([, shown]) => shown), changed, before };
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
