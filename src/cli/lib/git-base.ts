// Org files as they were at a git revision, for `plan --base` (the PR-review view): only the
// files a change touched are read from git (one diff names them, one `cat-file --batch` reads
// them); the others are the same on both sides. Four git processes whatever the change.
import { realpath, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { catFiles, git, gitNames } from "../../domain/config/git.js";
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
  let commit: string;
  try {
    // An option is never a revision (nothing from a user reaches git as one).
    if (rev.startsWith("-")) throw new Error("not a revision");
    // One process: the repository's root, and the revision's commit (an error if it has none).
    const [top, id] = (
      await git(start, ["rev-parse", "--show-toplevel", "--verify", `${rev}^{commit}`])
    ).split("\n");
    if (!id || !/^[0-9a-f]+$/.test(id)) throw new Error("not a revision");
    commit = id;
    // Paths given to diff, ls-files and cat-file below are relative to the repository root.
    root = await realpath(top!.trim());
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
  const [diffNames, untracked] = await Promise.all([
    gitNames(root, ["diff", "--name-only", "-z", "--no-renames", commit, "--", ...scope]),
    gitNames(root, ["ls-files", "-z", "--others", "--exclude-standard", "--", ...scope]),
  ]);
  const differing = new Set([...diffNames, ...untracked]);
  for (const name of differing) {
    if (files.has(name) || !/\.ya?ml$/.test(name)) continue;
    const dir = directories.find((d) => dirname(name) === (d.inRepo === "" ? "." : d.inRepo));
    if (dir)
      files.set(name, join(dir.path, name.slice(dir.inRepo === "" ? 0 : dir.inRepo.length + 1)));
  }
  const ordered = [...files].sort(([a], [b]) => (a < b ? -1 : 1));
  const changed = new Set<string>();
  const wanted: [inRepo: string, shown: string][] = [];
  for (const [inRepoPath, shown] of ordered) {
    if (!differing.has(inRepoPath)) continue;
    changed.add(shown);
    wanted.push([inRepoPath, shown]);
  }
  const texts = await catFiles(
    root,
    wanted.map(([inRepoPath]) => `${commit}:${inRepoPath}`),
  );
  const before: OrgSource[] = [];
  wanted.forEach(([, shown], k) => {
    // Not in the revision (null): the org did not exist then.
    const text = texts[k];
    if (text !== null && text !== undefined) before.push({ file: `${rev}:${shown}`, text });
  });
  return { files: ordered.map(([, shown]) => shown), changed, before };
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
