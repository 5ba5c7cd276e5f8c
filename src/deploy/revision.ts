// The revision of a deploy unit: SHA-256 over its files sorted by path. Equal revisions mean
// byte-identical file sets; the hash is what `pbxctl status` shows as desired and applied.
import { createHash } from "node:crypto";

export interface FileLike {
  path: string;
  content: string;
}

/** SHA-256 (hex) of a file set, independent of the order the files are given in. */
export function revisionOf(files: readonly FileLike[]): string {
  const hash = createHash("sha256");
  for (const file of [...files].sort((a, b) => compare(a.path, b.path))) {
    // Length prefixes keep `a`+`bc` and `ab`+`c` apart.
    const content = Buffer.from(file.content, "utf8");
    hash.update(`${Buffer.byteLength(file.path)}:${file.path}\n${content.length}:`);
    hash.update(content);
  }
  return hash.digest("hex");
}

/** SHA-256 (hex) of one file's content. */
export function contentHash(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex");
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
