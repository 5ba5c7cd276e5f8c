// The rule of nesting context prefixes (src/model/context-prefix-nesting.ts) and the sorted walk
// that finds every nesting pair in O(n log n): checked against comparing every pair, on prefixes
// drawn from a small alphabet so that nesting chains, siblings and duplicates are common.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { nestingPartners, prefixesNest } from "../../src/model/context-prefix-nesting.js";

/** The lowest other position whose prefix nests with each one's, comparing every pair. */
function everyPair(prefixes: readonly string[]): number[] {
  return prefixes.map((prefix) =>
    prefixes.findIndex((other) => other !== prefix && prefixesNest(prefix, other)),
  );
}

/** A small deterministic random source (the failures must reproduce). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

test("nests: one begins the other, either way, equal included; a shared start is not enough", () => {
  assert.ok(prefixesNest("acme_", "acme_x_"));
  assert.ok(prefixesNest("acme_x_", "acme_"));
  assert.ok(prefixesNest("acme_", "acme_"));
  assert.not.ok(prefixesNest("acme_", "acmex_"));
  assert.not.ok(prefixesNest("acme_x_", "acme_y_"));
});

test("nesting pairs are not always neighbours in sort order; the sorted walk still finds them", () => {
  const prefixes = ["a_c_", "a_", "a_b_"];
  // Sorted: a_, a_b_, a_c_: a_c_ nests with a_, which is not its neighbour.
  assert.equal([...prefixes].sort(), ["a_", "a_b_", "a_c_"]);
  assert.equal([...nestingPartners(prefixes)], [1, 0, 1]);
});

test("sorted, the prefixes that begin with p are exactly the run right after p", () => {
  const pick = random(3);
  const letters = ["a", "b", "_", "-", "A", "0"];
  for (let round = 0; round < 200; round++) {
    const words = Array.from({ length: 30 }, () =>
      Array.from(
        { length: 1 + Math.floor(pick() * 4) },
        () => letters[Math.floor(pick() * 6)],
      ).join(""),
    ).sort();
    for (const [k, p] of words.entries()) {
      let end = k + 1;
      while (end < words.length && words[end]!.startsWith(p)) end++;
      const beginning = words.filter((w) => w.startsWith(p)).length;
      // The run after p (p's own copies included) holds every word beginning with p.
      const firstOfP = words.indexOf(p);
      assert.is(end - firstOfP, beginning, `${p} in ${words.join(" ")}`);
    }
  }
});

test("the sorted walk gives what comparing every pair gives", () => {
  const pick = random(11);
  const parts = ["a", "b", "ab", "x-"];
  for (let round = 0; round < 500; round++) {
    const count = 1 + Math.floor(pick() * 25);
    const prefixes = Array.from({ length: count }, () => {
      const depth = 1 + Math.floor(pick() * 4);
      return `${Array.from({ length: depth }, () => parts[Math.floor(pick() * parts.length)]).join("_")}_`;
    });
    assert.equal([...nestingPartners(prefixes)], everyPair(prefixes), prefixes.join(" "));
  }
});

test("no nesting: every answer is -1, duplicates included (they are a clash of their own)", () => {
  assert.equal([...nestingPartners(["org_a_", "org_b_", "org_a_", "acme_"])], [-1, -1, -1, -1]);
  assert.equal([...nestingPartners([])], []);
});

test.run();
