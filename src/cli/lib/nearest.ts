// The nearest of some names to what was typed, for "Did you mean ...?" (unknown commands and
// unknown flags alike).

/** The name closest to `typed` by edit distance, if it is close enough to be a typo. */
export function nearestName(typed: string, ids: readonly string[]): string | undefined {
  let best: { id: string; distance: number } | undefined;
  for (const id of ids) {
    const distance = editDistance(typed, id);
    if (!best || distance < best.distance) best = { id, distance };
  }
  // More than half the word changed is not a typo of it.
  return best && best.distance <= Math.max(2, Math.floor(typed.length / 2)) ? best.id : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}
