// Splits long text into pieces an engine can take one at a time: sentences first, then clauses,
// then words, so that a chunk boundary falls where a speaker would pause anyway.

/** Default chunk size: a few sentences; small enough for Google's 5,000-byte input limit. */
export const DEFAULT_CHUNK_CHARS = 400;

// Sentence ends: Latin punctuation and the Devanagari/Bengali danda (।) and double danda (॥).
const SENTENCE_END = /(?<=[.!?।॥])\s+/u;
const CLAUSE_END = /(?<=[,;:])\s+/u;
const SPACE = /\s+/u;

/**
 * Returns non-empty trimmed chunks of at most `maxChars` characters (code points) whose
 * concatenation with single spaces keeps every word of `text` in order.
 */
export function splitIntoChunks(text: string, maxChars = DEFAULT_CHUNK_CHARS): string[] {
  if (maxChars < 1) throw new RangeError("maxChars must be at least 1");
  const chunks: string[] = [];
  let current = "";
  const flush = () => {
    if (current) chunks.push(current);
    current = "";
  };
  const add = (piece: string) => {
    if (!current) current = piece;
    else if (length(current) + 1 + length(piece) <= maxChars) current += ` ${piece}`;
    else {
      flush();
      current = piece;
    }
  };
  for (const piece of pieces(text.trim(), maxChars, [SENTENCE_END, CLAUSE_END, SPACE])) add(piece);
  flush();
  return chunks;
}

// Pieces no longer than maxChars, split by the coarsest separator that is enough.
function pieces(text: string, maxChars: number, separators: RegExp[]): string[] {
  if (!text) return [];
  if (length(text) <= maxChars) return [text];
  const [separator, ...finer] = separators;
  if (!separator) return hardSplit(text, maxChars);
  return text
    .split(separator)
    .filter((part) => part.length > 0)
    .flatMap((part) => pieces(part.trim(), maxChars, finer));
}

// A single "word" longer than a chunk (a URL, a run of digits): cut it by code points.
function hardSplit(text: string, maxChars: number): string[] {
  const codePoints = [...text];
  const out: string[] = [];
  for (let i = 0; i < codePoints.length; i += maxChars) {
    out.push(codePoints.slice(i, i + maxChars).join(""));
  }
  return out;
}

function length(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
