// Opening a file to stream it with its size known (Content-Length, ranges): one helper for
// greetings and recordings, so a missing file and a handle left open are handled once.
import { type FileHandle, open } from "node:fs/promises";

/** An open file and its size; the caller streams it and closes the handle. */
export interface SizedFile {
  handle: FileHandle;
  size: number;
}

/**
 * Opens `path` for reading with its size; a file that does not exist (or is a directory) throws
 * `missing()` instead. The handle keeps the file readable even if it is replaced meanwhile.
 */
export async function openSizedFile(path: string, missing: () => Error): Promise<SizedFile> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR") throw missing();
    throw error;
  }
  try {
    return { handle, size: (await handle.stat()).size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
