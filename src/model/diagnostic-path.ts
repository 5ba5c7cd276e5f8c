// Diagnostic paths (`ivrs[1].options[0].digit`) to and from the segments that walk a document.

export type PathSegment = string | number;

/** The path text of these segments: keys joined by `.`, indexes as `[n]`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}

/** The segments of a path written by formatPath (or by hand: `users[0].sip.md5_cred`). */
export function parsePath(path: string): PathSegment[] {
  const segments: PathSegment[] = [];
  for (const match of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (match[2] !== undefined) segments.push(Number(match[2]));
    else if (match[1] !== undefined) segments.push(match[1]);
  }
  return segments;
}

/** The segments of an ajv/JSON-pointer instancePath (`/ivrs/1/options/0`). */
export function pointerSegments(pointer: string): PathSegment[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

/** Whether `path` is `prefix` itself or lies below it. */
export function isWithin(path: string, prefix: string): boolean {
  if (prefix === "") return true;
  if (!path.startsWith(prefix)) return false;
  const next = path[prefix.length];
  return next === undefined || next === "." || next === "[";
}
