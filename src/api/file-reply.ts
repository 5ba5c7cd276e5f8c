// An open audio file answered whole (200) or as one byte range (206, 416 past the end), the
// way greeting playback and call recordings both need it: audio elements seek with `Range`.
import type { FileHandle } from "node:fs/promises";
import { parseByteRange } from "../domain/routing/ivr-audio-range.js";
import { type Reply, reply } from "./registry.js";

/** The reply streaming `handle` (`size` bytes) for the request's `Range` header; closes on 416. */
export async function rangedFileReply(
  file: { handle: FileHandle; size: number },
  rangeHeader: string | undefined,
  contentType: string,
): Promise<Reply> {
  const { handle, size } = file;
  const range = parseByteRange(rangeHeader, size);
  const common = { "content-type": contentType, "accept-ranges": "bytes" };
  if (range.kind === "unsatisfiable") {
    await handle.close();
    return reply(416, { error: "Range not satisfiable" }, { "content-range": `bytes */${size}` });
  }
  if (range.kind === "full") {
    return reply(200, handle.createReadStream(), { ...common, "content-length": String(size) });
  }
  const { start, end } = range;
  return reply(206, handle.createReadStream({ start, end }), {
    ...common,
    "content-length": String(end - start + 1),
    "content-range": `bytes ${start}-${end}/${size}`,
  });
}
