// Byte ranges of greeting playback (RFC 9110 §14): browsers' audio elements ask for
// `bytes=0-` and then for pieces while seeking. One range is served; a list of several is
// answered with the whole file, which the RFC allows.

/** What to send for a `Range` header against a file of `size` bytes. */
export type ByteRangeAnswer =
  | { kind: "full" }
  | { kind: "partial"; start: number; end: number }
  | { kind: "unsatisfiable" };

const SINGLE = /^bytes=(\d*)-(\d*)$/;

/**
 * Interprets `header` (absent, `bytes=a-b`, `bytes=a-`, `bytes=-n`) for a file of `size` bytes.
 * `end` is inclusive. Malformed or multi-range headers get the full file; a range starting at or
 * past the end (or a zero suffix) is unsatisfiable (416).
 */
export function parseByteRange(header: string | undefined, size: number): ByteRangeAnswer {
  if (!header) return { kind: "full" };
  const match = SINGLE.exec(header.trim());
  if (!match) return { kind: "full" };
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return { kind: "full" };
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: "unsatisfiable" };
    return { kind: "partial", start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (start >= size) return { kind: "unsatisfiable" };
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (end < start) return { kind: "full" };
  return { kind: "partial", start, end };
}
