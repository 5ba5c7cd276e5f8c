// Running git for the GitOps commands (`plan --base`, `apply --changed-since`): a few processes
// per run, whatever the number of files. NUL-separated names (`-z`) are taken as they are,
// without git's quoting of unusual characters.
import { execFile, spawn } from "node:child_process";

/** A git command that failed: its stderr. */
export class GitError extends Error {
  override readonly name = "GitError";
}

/** The stdout of `git <args>` run in `cwd`. */
export function git(cwd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("git", args, { cwd, maxBuffer: 1 << 30 }, (error, stdout, stderr) => {
      if (error) reject(new GitError(String(stderr).trim() || error.message));
      else resolve(stdout);
    });
  });
}

/** The NUL-separated names `git <args>` prints (`-z`). */
export async function gitNames(cwd: string, args: readonly string[]): Promise<string[]> {
  return (await git(cwd, args)).split("\0").filter((name) => name !== "");
}

/**
 * The text of each `<rev>:<path>` object (null where it does not exist), read by one
 * `git cat-file --batch -z` instead of one process per file.
 */
export function catFiles(cwd: string, specs: readonly string[]): Promise<(string | null)[]> {
  if (specs.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["cat-file", "--batch", "-z"], { cwd });
    const chunks: Buffer[] = [];
    const errors: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => errors.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) {
        reject(new GitError(Buffer.concat(errors).toString().trim() || `git exited ${code}`));
        return;
      }
      try {
        resolve(batchObjects(Buffer.concat(chunks), specs.length));
      } catch (error) {
        reject(error);
      }
    });
    child.stdin.end(specs.map((spec) => `${spec}\0`).join(""));
  });
}

/** `cat-file --batch` output: per object `<oid> <type> <size>\n<bytes>\n`, or `<spec> missing\n`. */
function batchObjects(out: Buffer, count: number): (string | null)[] {
  const objects: (string | null)[] = [];
  let at = 0;
  while (objects.length < count) {
    const end = out.indexOf(10, at);
    if (end < 0) throw new GitError("git cat-file: output ended early");
    const header = out.toString("utf8", at, end);
    const object = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
    if (!object) {
      // `<spec> missing` or `ambiguous`: not in that revision.
      objects.push(null);
      at = end + 1;
      continue;
    }
    const size = Number(object[2]);
    objects.push(object[1] === "blob" ? out.toString("utf8", end + 1, end + 1 + size) : null);
    at = end + 1 + size + 1;
  }
  return objects;
}
