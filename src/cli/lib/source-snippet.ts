// The line a diagnostic points at, with a caret under its column, as compilers print it:
//
//   orgs/acme.yaml:24:22 ivrs[0].options[1].action_type: Invalid action_type: dance (...)
//      24 |         action_type: dance
//         |                      ^
import { readFileSync } from "node:fs";
import type { Paint } from "./colour.js";

/** Reads a file's text, or undefined (a file at a git revision is not on disk). */
export type SourceReader = (file: string) => string | undefined;

/** Reads from disk, each file once. */
export function diskSources(): SourceReader {
  const cache = new Map<string, string[] | undefined>();
  return (file) => {
    if (!cache.has(file)) {
      try {
        cache.set(file, [readFileSync(file, "utf8")]);
      } catch {
        cache.set(file, undefined);
      }
    }
    return cache.get(file)?.[0];
  };
}

/** The two snippet lines for `line`:`col` of `text` (1-based), or none when out of range. */
export function sourceSnippet(text: string, line: number, col: number, paint: Paint): string[] {
  const source = text.split("\n")[line - 1];
  if (source === undefined) return [];
  const number = String(line);
  const gutter = " ".repeat(number.length);
  // Tabs stay tabs under the caret so it lines up however the terminal shows them.
  const lead = source.slice(0, Math.max(0, col - 1)).replace(/[^\t]/g, " ");
  return [
    paint("dim", `  ${number} | `) + source.replace(/\r$/, ""),
    paint("dim", `  ${gutter} | `) + lead + paint("red", "^"),
  ];
}
