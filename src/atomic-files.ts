// Durable file replacement, the one way any layer writes a file others read (the deployer's
// config tree and records, IVR greetings, uploaded media): a crash at any instant leaves each
// file either wholly old or wholly new, and a reader (Asterisk playing a greeting) never sees a
// half-written one. Write a temp file in the same directory, fsync it, rename it over the target
// (atomic on POSIX within one file system), then fsync the directory so the rename itself
// survives a power loss. Like src/config.ts, it sits beside the layers for any of them.
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, rename, rmdir, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Temp files of interrupted writes start with this and end with `.tmp`. */
export const TEMP_MARK = ".pbxctl-";

/** Options of writeFileAtomic. */
export interface AtomicWriteOptions {
  /**
   * The new file's modification time is at least this (ms since the epoch), set on the temp file
   * before the rename so that no reader ever sees the new content with an earlier time.
   */
  minMtimeMs?: number;
}

/** Replaces `file` with `content` atomically and durably, creating directories as needed. */
export async function writeFileAtomic(
  file: string,
  content: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `${TEMP_MARK}${basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temp, "wx", 0o644);
  try {
    await handle.writeFile(content);
    if (options.minMtimeMs !== undefined) {
      const written = await handle.stat();
      if (written.mtimeMs < options.minMtimeMs) {
        await handle.utimes(written.atime, new Date(options.minMtimeMs));
      }
    }
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  await syncDirectory(dir);
}

/** Removes `file` (if present) durably, then any directories up to `stopAt` left empty. */
export async function removeFileDurable(file: string, stopAt: string): Promise<void> {
  await unlink(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
  let dir = dirname(file);
  await syncDirectory(dir).catch(() => {});
  while (dir.startsWith(stopAt) && dir !== stopAt) {
    const left = await readdir(dir).catch(() => null);
    if (left === null || left.length > 0) break;
    await rmdir(dir).catch(() => {});
    dir = dirname(dir);
  }
}

/** fsyncs a directory so that renames and unlinks in it are on disk. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Whether a file name is a leftover temp file of an interrupted write. */
export function isTempFile(name: string): boolean {
  return name.startsWith(TEMP_MARK) && name.endsWith(".tmp");
}
