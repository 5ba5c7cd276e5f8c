// The claims index (src/cli/lib/claims-index.ts): the checks across files answered from an
// index a change updates give exactly what checking every file gives (crossOrgProblems), after
// any sequence of changes, additions and removals (nesting context prefixes included); its journal is appended, not rewritten; a
// corrupted index or journal is detected and costs only a rebuild.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  CLAIMS_INDEX,
  ClaimsIndex,
  JOURNAL_LIMIT,
  type RunFile,
} from "../../src/cli/lib/claims-index.js";
import { crossOrgProblems, type OrgSummary } from "../../src/model/org-summary.js";

let dir = "";
const VERSION = "test-version";
test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), "pbxctl-claims-"));
});
test.after.each(() => rmSync(dir, { recursive: true, force: true }));

/** A small deterministic random source (the failures must reproduce). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const TRUNK_VALUES = [
  "203.0.113.0/24",
  "203.0.113.7",
  "203.0.113.128/25",
  "203.0.0.0/16",
  "198.51.100.1",
  "198.51.100.0/30",
  "10.0.0.0/8",
  "0.0.0.0/0",
  "2001:db8::/32",
  "2001:db8::1",
  "2001:db8:1::/48",
  "sip.carrier.example",
  "SIP.Carrier.Example",
  "other.example",
];

/** A made-up org file: few distinct values, so clashes of every kind are common. */
function summaryFile(file: string, pick: () => number, seed = 0): RunFile & { text: string } {
  const one = <T>(values: readonly T[]) => values[Math.floor(pick() * values.length)]!;
  const at = { line: 1 + Math.floor(pick() * 50), col: 1 };
  const dids = Array.from({ length: Math.floor(pick() * 3) }, (_, k) => {
    const key = one(["911", "912", "913", "914"]);
    return { path: `dids[${k}].number`, value: `+${key}`, key, at };
  });
  // Half the seeds without the widest blocks, which would hold most other claims.
  const values = seed % 2 === 0 ? TRUNK_VALUES : TRUNK_VALUES.filter((v) => !/\/(0|8|16)$/.test(v));
  const matches = Array.from({ length: Math.floor(pick() * 3) }, (_, k) => ({
    path: `trunks[0].match[${k}]`,
    value: one(values),
    at,
  }));
  const summary: OrgSummary = {
    id: one(["a", "b", "c", "d", "e", "f", "g", "h"]),
    // Prefixes that nest (p1 begins p1_a, p1_a_b, p1_b and p10; p, in a third of the seeds,
    // begins every one) beside siblings (p1_a and p1_b): nesting clashes are common too.
    context_prefix: one([
      "p1",
      "p2",
      "p3",
      "p4",
      "p5",
      "p6",
      "p7",
      "p8",
      "p9",
      "p1_a",
      "p1_a_b",
      "p1_b",
      "p10",
      ...(seed % 3 === 0 ? ["p"] : []),
    ]),
    slug: one([null, "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "ü"]),
    dids,
    trunk_matches: matches,
    gateway: null,
    at: { id: at, context_prefix: at, slug: at },
  };
  const text = JSON.stringify(summary);
  const loaded = pick() > 0.1;
  return {
    name: file,
    hash: `h-${text}-${loaded}`,
    summarized: loaded ? { file: `orgs/${file}`, summary } : null,
    text,
  };
}

const expected = (files: readonly RunFile[]) =>
  crossOrgProblems(files.flatMap((f) => (f.summarized ? [f.summarized] : [])));

test("after any changes, additions and removals the index gives what checking every file gives", async () => {
  for (let seed = 1; seed <= 40; seed++) {
    const pick = random(seed);
    rmSync(join(dir, CLAIMS_INDEX), { force: true });
    let files = Array.from({ length: 40 }, (_, k) =>
      summaryFile(`f${String(k).padStart(3, "0")}.yaml`, pick, seed),
    );
    for (let round = 0; round < 12; round++) {
      const index = await ClaimsIndex.open(dir, VERSION);
      assert.equal(index.problems(files), expected(files), `seed ${seed}, round ${round}`);
      await index.record(files);
      // One to three files change; sometimes one is added or removed.
      const next = [...files];
      for (let n = 1 + Math.floor(pick() * 3); n > 0; n--) {
        const k = Math.floor(pick() * next.length);
        next[k] = summaryFile(next[k]!.name, pick, seed);
      }
      if (pick() < 0.3) next.splice(Math.floor(pick() * next.length), 1);
      if (pick() < 0.3) {
        next.push(summaryFile(`g${seed}-${round}.yaml`, pick, seed));
        next.sort((a, b) => (a.name < b.name ? -1 : 1));
      }
      files = next;
    }
    // A run over a subset of the files (one file validated alone) agrees too.
    const index = await ClaimsIndex.open(dir, VERSION);
    const subset = files.filter((_, k) => k % 3 === 0);
    assert.equal(index.problems(subset), expected(subset), `seed ${seed}, subset`);
  }
});

test("two unchanged files whose prefixes nest are still found when a third file changes", async () => {
  const at = { line: 3, col: 19 };
  const file = (name: string, id: string, prefix: string): RunFile => {
    const summary: OrgSummary = {
      id,
      context_prefix: prefix,
      slug: null,
      dids: [],
      trunk_matches: [],
      gateway: null,
      at: { id: at, context_prefix: at, slug: at },
    };
    return { name, hash: `h-${id}-${prefix}`, summarized: { file: `orgs/${name}`, summary } };
  };
  const files = [
    file("a.yaml", "a", "acme_"),
    file("b.yaml", "b", "acme_x_"),
    file("c.yaml", "c", "c_"),
  ];
  await (await ClaimsIndex.open(dir, VERSION)).record(files);
  files[2] = file("c.yaml", "c", "cc_");
  const index = await ClaimsIndex.open(dir, VERSION);
  const problems = index.problems(files);
  assert.equal(problems, expected(files));
  assert.equal(
    problems.map((p) => `${p.file}:${p.line}:${p.col} ${p.message}`),
    [
      "orgs/b.yaml:3:19 context prefix acme_x_ overlaps acme_ in orgs/a.yaml: one organization's prefix may not begin another's",
    ],
  );
});

test("a one-file change appends a journal line instead of writing the index again", async () => {
  const pick = random(7);
  const files = Array.from({ length: 30 }, (_, k) => summaryFile(`f${k}.yaml`, pick));
  await (await ClaimsIndex.open(dir, VERSION)).record(files);
  const file = join(dir, CLAIMS_INDEX);
  const written = readFileSync(file);
  files[4] = summaryFile("f4.yaml", pick);
  const index = await ClaimsIndex.open(dir, VERSION);
  assert.equal(index.problems(files), expected(files));
  await index.record(files);
  const after = readFileSync(file);
  assert.equal(after.subarray(0, written.length), written, "the index's bytes are kept");
  const added = after.subarray(written.length).toString("utf8");
  assert.is(added.split("\n").length, 2, "one journal line");
  assert.match(added, '"f4.yaml"');
  // Unchanged files: nothing written.
  await (await ClaimsIndex.open(dir, VERSION)).record(files);
  assert.is(statSync(file).size, after.length);
});

test("a journal longer than its limit is folded into a new index", async () => {
  const pick = random(9);
  let files = Array.from({ length: JOURNAL_LIMIT + 10 }, (_, k) => summaryFile(`f${k}.yaml`, pick));
  await (await ClaimsIndex.open(dir, VERSION)).record(files);
  const size = statSync(join(dir, CLAIMS_INDEX)).size;
  files = files.map((f) => summaryFile(f.name, pick));
  const index = await ClaimsIndex.open(dir, VERSION);
  assert.equal(index.problems(files), expected(files));
  await index.record(files);
  const reread = readFileSync(join(dir, CLAIMS_INDEX), "utf8");
  assert.ok(!/^[0-9a-f]{40} \[/m.test(reread), "no journal left");
  assert.ok(Math.abs(reread.length - size) < size, "one index");
});

test("a corrupted index or journal is detected: the run checks every file and rebuilds it", async () => {
  const pick = random(11);
  const files = Array.from({ length: 30 }, (_, k) => summaryFile(`f${k}.yaml`, pick));
  const file = join(dir, CLAIMS_INDEX);
  await (await ClaimsIndex.open(dir, VERSION)).record(files);
  const bytes = readFileSync(file);
  // A byte flipped in a claim line.
  const flipped = Buffer.from(bytes);
  const at = bytes.lastIndexOf("\n", bytes.length - 2) + 3;
  flipped[at] = flipped[at]! ^ 1;
  writeFileSync(file, flipped);
  let index = await ClaimsIndex.open(dir, VERSION);
  assert.not.ok(index.usable, "a flipped byte is found");
  assert.equal(index.problems(files), expected(files));
  await index.record(files);
  assert.ok((await ClaimsIndex.open(dir, VERSION)).usable, "rebuilt");

  // A torn journal append: the journal ends there, the file is seen changed and checked.
  files[3] = summaryFile("f3.yaml", pick);
  index = await ClaimsIndex.open(dir, VERSION);
  await index.record(files);
  const journaled = readFileSync(file);
  writeFileSync(file, journaled.subarray(0, journaled.length - 5));
  files[5] = summaryFile("f5.yaml", pick);
  index = await ClaimsIndex.open(dir, VERSION);
  assert.ok(index.usable);
  assert.equal(index.problems(files), expected(files));
  await index.record(files);
  assert.ok(readFileSync(file).length < journaled.length + 200, "written anew");
  assert.equal((await ClaimsIndex.open(dir, VERSION)).problems(files), expected(files));

  // Another version's index is never read.
  assert.not.ok((await ClaimsIndex.open(dir, "other-version")).usable);
});

test.run();
