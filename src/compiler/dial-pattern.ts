// Asterisk extension patterns (`_91XXXXXXXXXX`, `_0[2-9]X.`): whether a number matches one, and
// which of several wins. Asterisk sorts a context's extensions before matching (main/pbx.c
// ext_cmp): a literal extension before any pattern, then patterns position by position, the
// smaller character class first, `.` and `!` last. The first that matches takes the call, so a
// more specific pattern silently wins over a broader one.

/** One position of a pattern: the characters it accepts, or a tail wildcard. */
type Position = { chars: string } | { tail: "." | "!" };

const CLASSES: Record<string, string> = {
  X: "0123456789",
  Z: "123456789",
  N: "23456789",
};

function parse(pattern: string): Position[] {
  if (!pattern.startsWith("_")) return [...pattern].map((c) => ({ chars: c }));
  const positions: Position[] = [];
  const body = pattern.slice(1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    const upper = c.toUpperCase();
    if (c === "." || c === "!") positions.push({ tail: c });
    else if (CLASSES[upper]) positions.push({ chars: CLASSES[upper] });
    else if (c === "[") {
      const end = body.indexOf("]", i);
      const inside = body.slice(i + 1, end < 0 ? body.length : end);
      let chars = "";
      for (let j = 0; j < inside.length; j++) {
        if (inside[j + 1] === "-" && j + 2 < inside.length) {
          for (let code = inside.charCodeAt(j); code <= inside.charCodeAt(j + 2); code++) {
            chars += String.fromCharCode(code);
          }
          j += 2;
        } else chars += inside[j];
      }
      positions.push({ chars: [...new Set(chars)].sort().join("") });
      i = end < 0 ? body.length : end;
    } else positions.push({ chars: c });
  }
  return positions;
}

/** Whether `number` matches the extension `pattern` (a literal or a `_` pattern). */
export function matchesPattern(pattern: string, number: string): boolean {
  const positions = parse(pattern);
  const match = (p: number, n: number): boolean => {
    if (p === positions.length) return n === number.length;
    const position = positions[p]!;
    if ("tail" in position) {
      const min = position.tail === "." ? 1 : 0;
      return number.length - n >= min;
    }
    return n < number.length && position.chars.includes(number[n]!) && match(p + 1, n + 1);
  };
  return match(0, 0);
}

/** Asterisk's weight of one position: fewer characters first, then the lowest one; tails last. */
function weight(position: Position | undefined): number {
  if (position === undefined) return 0;
  if ("tail" in position) return position.tail === "." ? 0x18000 : 0x28000;
  return (position.chars.length << 8) | position.chars.charCodeAt(0);
}

/** Sort order of two extensions as Asterisk matches them: negative when `a` is tried first. */
export function compareExtensions(a: string, b: string): number {
  const aLiteral = !a.startsWith("_");
  const bLiteral = !b.startsWith("_");
  if (aLiteral !== bLiteral) return aLiteral ? -1 : 1;
  if (aLiteral) return a < b ? -1 : a > b ? 1 : 0;
  const left = parse(a);
  const right = parse(b);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const diff = weight(left[i]) - weight(right[i]);
    if (diff !== 0) return diff;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The extension Asterisk picks for `number` among `extensions`, or undefined when none matches. */
export function bestMatch<T>(
  extensions: readonly T[],
  number: string,
  extensionOf: (item: T) => string,
): T | undefined {
  return [...extensions]
    .filter((item) => matchesPattern(extensionOf(item), number))
    .sort((a, b) => compareExtensions(extensionOf(a), extensionOf(b)))[0];
}

/** A pattern position as an item of a sequence: a character set, or any characters repeated. */
type Item = { chars: string; repeat: boolean };

const ANY = "0123456789*#+";

// A pattern's items, kept for the patterns seen last: `patternsOverlap` runs over every pair of
// an org's outbound patterns (lint), so each pattern would be parsed once per pair.
const itemsCache = new Map<string, Item[]>();
const ITEMS_CACHE_SIZE = 256;

function items(pattern: string): Item[] {
  let found = itemsCache.get(pattern);
  if (!found) {
    if (itemsCache.size >= ITEMS_CACHE_SIZE) itemsCache.clear();
    found = parsedItems(pattern);
    itemsCache.set(pattern, found);
  }
  return found;
}

function parsedItems(pattern: string): Item[] {
  return parse(pattern).flatMap((position): Item[] =>
    "tail" in position
      ? position.tail === "."
        ? [
            { chars: ANY, repeat: false },
            { chars: ANY, repeat: true },
          ]
        : [{ chars: ANY, repeat: true }]
      : [{ chars: position.chars, repeat: false }],
  );
}

/** Whether some number matches both extensions (patterns or literals). */
export function patternsOverlap(a: string, b: string): boolean {
  const left = items(a);
  const right = items(b);
  const seen = new Set<string>();
  const shared = (x: Item, y: Item) => {
    for (const c of x.chars) if (y.chars.includes(c)) return true;
    return false;
  };
  const walk = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    if (seen.has(key)) return false;
    seen.add(key);
    if (i === left.length && j === right.length) return true;
    const l = left[i];
    const r = right[j];
    if (l?.repeat && walk(i + 1, j)) return true;
    if (r?.repeat && walk(i, j + 1)) return true;
    // Both repeating: consuming a shared character leads back here, skipping covers it.
    if (l && r && !(l.repeat && r.repeat) && shared(l, r)) {
      return walk(l.repeat ? i : i + 1, r.repeat ? j : j + 1);
    }
    return false;
  };
  return walk(0, 0);
}
