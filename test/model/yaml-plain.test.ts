// readPlainYaml reads an org file from the parser's tokens without composing a document; it must
// read a file only where the yaml package composes it without an error or a warning, and then
// give yamlData's data and positionOf's positions, path for path (issue 30, part i). Checked over
// every YAML file of the repository and over thousands of seeded mutations of them: characters
// YAML gives a meaning to inserted, deleted and replaced, lines repeated, indented and swapped.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isMap, parseAllDocuments } from "yaml";
import { acmeVariant } from "../../bench/acme-variants.js";
import { OrgFileSchema } from "../../src/model/schema-check.js";
import { parseYaml, positionOf, yamlData } from "../../src/model/yaml.js";
import { plainPositionOf, readPlainYaml } from "../../src/model/yaml-plain.js";

const ROOT = join(import.meta.dirname, "..", "..");

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : yamlFiles(path);
    return entry.name.endsWith(".yaml") ? [path] : [];
  });
}

const repositoryFiles = ["orgs", "fixtures", "docs", "test"].flatMap((dir) =>
  yamlFiles(join(ROOT, dir)),
);

/** Own keys in order, recursively: deep equality alone misses an own `__proto__` or key order. */
const shape = (value: unknown): unknown =>
  value && typeof value === "object"
    ? Object.getOwnPropertyNames(value).map((k) => [
        k,
        shape((value as Record<string, unknown>)[k]),
      ])
    : value;

/** Every path into `data`, each entry's and item's, and a missing child of each collection. */
function pathsOf(data: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (!data || typeof data !== "object") return [];
  const paths: (string | number)[][] = [
    [...prefix, "no_such_field"],
    [...prefix, 10_000],
  ];
  const entries = Array.isArray(data)
    ? data.map((v, i) => [i, v] as const)
    : Object.entries(data as Record<string, unknown>);
  for (const [segment, value] of entries) {
    paths.push([...prefix, segment], ...pathsOf(value, [...prefix, segment]));
  }
  return paths;
}

/**
 * Whether readPlainYaml read `text`; where it did, that the yaml package has no problem with it
 * and that the data and every position are the same both ways.
 */
function readsTheSame(text: string, label: string): boolean {
  const plain = readPlainYaml(text, OrgFileSchema);
  if (!plain) return false;
  const parsed = parseYaml(text, "f.yaml");
  assert.equal(parsed.problems, [], `${label}: read plain, but the yaml package says\n${text}`);
  const composed = yamlData(parsed.source, OrgFileSchema);
  assert.ok("data" in composed, label);
  const data = (composed as { data: unknown }).data;
  assert.equal(plain.data, data, `${label}: data\n${text}`);
  assert.equal(shape(plain.data), shape(data), `${label}: keys\n${text}`);
  for (const path of [[], ...pathsOf(data)]) {
    for (const key of [false, true]) {
      assert.equal(
        plainPositionOf(plain, path, { key }),
        positionOf(parsed.source, path, { key }),
        `${label}: position of ${JSON.stringify(path)}${key ? " (key)" : ""}\n${text}`,
      );
    }
  }
  return true;
}

test("every YAML file of the repository reads the same; each org file is read from its tokens", () => {
  for (const file of repositoryFiles) {
    const text = readFileSync(file, "utf8");
    const documents = parseAllDocuments(text);
    // One document with a block mapping at its root: an org file (the others are fixtures of
    // several orgs, or lists of calls).
    const orgFile =
      documents.length === 1 && isMap(documents[0]!.contents) && !documents[0]!.contents.flow;
    assert.is(readsTheSame(text, file), orgFile, file);
  }
  assert.ok(readsTheSame(acmeVariant(7), "acme variant 7"), "the bench's files are plain");
});

test("line ends, spaced and quoted keys, block scalars and comments read the same", () => {
  const acme = readFileSync(join(ROOT, "orgs", "acme.yaml"), "utf8");
  for (const text of [
    acme.replace(/\n/g, "\r\n"),
    "org :\n  name : x\n",
    "org:\n  \"name\": x\n  'slug': y\n",
    "org:\n  name: |-\n    x\n  slug: >+\n    y\n\n  notes: |2\n      z\n",
    "org:\n  name: x\n  # the end\n",
    "org:\n  name: x\n    # indented further\n  slug: y\n",
    "org:\n  name: 'it''s'\n  slug: \"a\\tb\\u00e9\"\n  status: ~\n  x: 0x1F\n  y: .inf\n",
    "org:\n  constructor: x\n  __proto__: y\n  toString: z\n",
  ]) {
    assert.ok(readsTheSame(text, "case"), JSON.stringify(text));
  }
});

test("plain scalars are typed as the core schema types them", () => {
  const texts = ["NULL", "Null", "nul", "~", "~x", "TRUE", "True", "tRUE", "False", "Yes", "on"];
  texts.push("-.inf", "+.INF", ".NaN", ".nan.", "0o17", "0o8", "0x1F", "0xG", "-0", "+12", "1e3");
  texts.push("1.", ".5", "+", ".", "1_000", "12:30", "0.1.2", "123abc", "-x", "+918065978001");
  // Under `extra` nothing expects text; under `org.name` numbers keep their text.
  const lines = texts.map((text, i) => `  v${i}: ${text}\n  w${i}: [${text}]\n`).join("");
  const text = `org:\n  name: 12\nextra:\n${lines}`;
  assert.ok(readsTheSame(text, "typed scalars"));
  const data = readPlainYaml(text, OrgFileSchema)!.data as { org: { name: unknown } };
  assert.is(data.org.name, "12");
});

test("paths as strings place as positionOf places them", () => {
  const text = readFileSync(join(ROOT, "orgs", "acme.yaml"), "utf8");
  const plain = readPlainYaml(text, OrgFileSchema)!;
  const { source } = parseYaml(text, "acme.yaml");
  for (const path of ["org.name", "users[1].sip", "ivrs[0].options[2].digit", "nope", "org.x.y"]) {
    assert.equal(plainPositionOf(plain, path), positionOf(source, path), path);
  }
});

/** A small deterministic generator (mulberry32): the same mutations on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SIGNIFICANT = [
  "\r",
  "\u0085",
  "\u2028",
  " ",
  "  ",
  "\t",
  "\n",
  ":",
  ": ",
  "-",
  "- ",
  "#",
  " #",
  ",",
  "{",
  "}",
  "[",
  "]",
  '"',
  "'",
  "&a ",
  "*a",
  "!!str ",
  "!",
  "|",
  ">",
  "?",
  "? ",
  "%",
  "@",
  "`",
  "---",
  "...",
  "\\",
  "a",
  "1",
  "0x1",
  "~",
  "null",
  "true",
  ".inf",
  "<<",
  "\r\n",
  "\u00a0",
  "é",
];

function mutate(text: string, next: () => number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const at = Math.floor(next() * text.length);
  const lines = text.split("\n");
  const line = Math.floor(next() * lines.length);
  switch (Math.floor(next() * 7)) {
    case 0:
      return text.slice(0, at) + pick(SIGNIFICANT) + text.slice(at);
    case 1:
      return text.slice(0, at) + text.slice(at + 1 + Math.floor(next() * 3));
    case 2:
      return text.slice(0, at) + pick(SIGNIFICANT) + text.slice(at + 1);
    case 3:
      lines.splice(line, 0, lines[line]!);
      return lines.join("\n");
    case 4:
      lines[line] = ` ${lines[line]}`;
      return lines.join("\n");
    case 5:
      lines[line] = lines[line]!.replace(/^ /, "");
      return lines.join("\n");
    default: {
      const other = Math.floor(next() * lines.length);
      [lines[line], lines[other]] = [lines[other]!, lines[line]!];
      return lines.join("\n");
    }
  }
}

/** Short files, so that thousands of mutants parse in a second or two. */
const SEEDS = [
  `# an org
org:
  name: Acme   # trailing
  slug: acme
  status: active
users:
  - extension: 1001
    name: "Alice Rao"
    sip: { md5_cred: 998272038667f093560f9db1a95ca646 }
  - extension: '1002'
    name: Bob
    tags: [a, "b", 'c']
queues:
  - { number: "600", members: [ { extension: "101" }, { extension: '1002', penalty: 1 } ] }
ivrs:
  - extension: 3000
    greeting_text: >
      Welcome to Acme.
      Press 1.
    options:
      - { digit: 1, action_type: queue, action_destination: 2000 }
      - { digit: "#", action_type: hangup }
notes: |
  line one
    line two
`,
  `org:
  name: Zed
  id: 4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d
dids:
- number: +918065978001
  destination_type: user
  destination: 1001
outbound_routes:
  - pattern: "_0X."
    strip: 1
    prepend: ""
    enabled: true
    weight: 1.5e3
    note: multi
      line plain
`,
];

test("mutated files read plain only where the yaml package composes them without a problem", () => {
  const next = random(30);
  let read = 0;
  let total = 0;
  for (const seed of SEEDS) {
    for (let k = 0; k < 1500; k++) {
      let text = seed;
      const times = 1 + Math.floor(next() * 3);
      for (let m = 0; m < times; m++) text = mutate(text, next);
      total++;
      if (readsTheSame(text, `mutant ${k}`)) read++;
    }
  }
  // Not vacuous: a good share of mutants stay plain (most edits of a value keep it plain).
  assert.ok(read > total / 5, `${read} of ${total} read plain`);
  assert.ok(read < total, "some mutants are not plain");
});

test("files outside the plain subset are left to the yaml package", () => {
  for (const text of [
    "org: &a {name: x}\nother: *a\n",
    "org: !!map {name: x}\n",
    "---\norg: {name: x}\n",
    "org:\n  name: x\norg:\n  name: y\n",
    "org:\n  name:\n",
    "? org\n: {name: x}\n",
    "org: {name: x,\n  slug: y}\n",
    "org: {name: [a,\n  b]}\n",
    "1: x\n",
    "org:\n\tname: x\n",
    "- a\n- b\n",
    "",
    "# only a comment\n",
    "org: x\n---\norg: y\n",
    "\ufefforg:\n  name: x\n",
  ]) {
    assert.is(readPlainYaml(text, OrgFileSchema), undefined, JSON.stringify(text));
  }
});

test.run();
