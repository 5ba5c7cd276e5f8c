// When two orgs' context prefixes nest (one begins the other), the one rule of it: realtime PJSIP
// owns rows by prefix (`id >= prefix and id < prefix || U+10FFFF`) and generated names begin with
// it, so `org_` beside `org_<uuid>_` would hand the second org's objects to the first. The store
// refuses such a prefix when an org is created or applied (organization-repository.ts
// `nestingPrefix`, org-creation.ts `assertPrefixApart`); `pbxctl validate` finds it across org
// files (org-summary.ts, and the CLI's claims index from its sorted claim lines).

/** Why nesting is refused, as every message about it ends. */
export const PREFIX_NESTING_RULE = "one organization's prefix may not begin another's";

/** Whether two context prefixes nest: one begins the other (equal prefixes included). */
export function prefixesNest(a: string, b: string): boolean {
  return a.startsWith(b) || b.startsWith(a);
}

/**
 * For each of `prefixes`, the lowest position holding another prefix that nests with it (one
 * begins the other, equal ones excluded: those are duplicates, a clash of their own), or -1.
 *
 * Sorted, the prefixes that begin with `p` are exactly the run right after `p` (if `p <= x <= y`
 * and `y` begins with `p`, so does `x`). So a walk in sorted order keeps a stack that is always
 * the chain of the current prefix's shorter nesting prefixes: pop what does not begin the current
 * one (its run has ended: nothing later begins with it), and what is left all does. Nesting pairs
 * are NOT always neighbours (`a_ < a_b_ < a_c_`: `a_` and `a_c_` nest), so the stack, not a
 * neighbour check, is the rule (test/model/context-prefix-nesting.test.ts checks it against every
 * pair). O(n log n) for the sort, then O(n x depth), and a prefix is at most 48 characters.
 */
export function nestingPartners(prefixes: readonly string[]): Int32Array {
  // The lowest position of each distinct prefix, in sorted order.
  const first = new Map<string, number>();
  prefixes.forEach((prefix, at) => {
    if (!first.has(prefix)) first.set(prefix, at);
  });
  const sorted = [...first.keys()].sort();
  const none = Number.MAX_SAFE_INTEGER;
  /** Lowest position among a prefix's strictly longer nesting prefixes, and among its shorter. */
  const below = new Map<string, number>();
  const above = new Map<string, number>();
  // Each entry: the prefix, the lowest position of it and its shorter ones (the chain so far),
  // and the lowest position of its longer ones met so far.
  const stack: { prefix: string; chain: number; longer: number }[] = [];
  const pop = () => {
    const done = stack.pop()!;
    below.set(done.prefix, done.longer);
    const parent = stack[stack.length - 1];
    if (parent) {
      parent.longer = Math.min(parent.longer, done.longer, first.get(done.prefix)!);
    }
  };
  for (const prefix of sorted) {
    while (stack.length > 0 && !prefix.startsWith(stack[stack.length - 1]!.prefix)) pop();
    const top = stack[stack.length - 1];
    above.set(prefix, top ? top.chain : none);
    stack.push({
      prefix,
      chain: Math.min(top ? top.chain : none, first.get(prefix)!),
      longer: none,
    });
  }
  while (stack.length > 0) pop();
  const partners = new Int32Array(prefixes.length);
  prefixes.forEach((prefix, at) => {
    const lowest = Math.min(above.get(prefix)!, below.get(prefix)!);
    partners[at] = lowest === none ? -1 : lowest;
  });
  return partners;
}
