// yamlData reads a plain file in one walk and leaves anything else to the yaml package's own
// conversion: both must give the same data, key for key, for every file (issue 30, part g).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FlowFileSchema } from "../../src/model/flow-file.js";
import { NodesFileSchema } from "../../src/model/nodes-file.js";
import { OrgFileSchema } from "../../src/model/schema-check.js";
import { convertedData, parseYaml, yamlData } from "../../src/model/yaml.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** Every .yaml file under `dir`, recursively. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return yamlFiles(path);
    return entry.name.endsWith(".yaml") ? [path] : [];
  });
}

/** The data both ways, each from its own parse (the conversion writes into its document). */
function bothWays(text: string, schema: object) {
  const oneWalk = yamlData(parseYaml(text, "f.yaml").source, schema);
  const converted = convertedData(parseYaml(text, "f.yaml").source, schema);
  return { oneWalk, converted };
}

function assertSame(text: string, schema: object = OrgFileSchema) {
  const { oneWalk, converted } = bothWays(text, schema);
  assert.equal(oneWalk, converted, text);
  // Deep equality does not see an own `__proto__` or what a key shadows: compare the keys too.
  const keys = (value: unknown): unknown =>
    value && typeof value === "object"
      ? Object.getOwnPropertyNames(value).map((k) => [
          k,
          keys((value as Record<string, unknown>)[k]),
        ])
      : value;
  if ("data" in oneWalk && "data" in converted) {
    assert.equal(keys(oneWalk.data), keys(converted.data), text);
  }
}

test("every org, flow and nodes file of the repository reads the same both ways", () => {
  const files = [...yamlFiles(join(ROOT, "orgs")), ...yamlFiles(join(ROOT, "fixtures"))];
  assert.ok(files.length > 20);
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const schema of [OrgFileSchema, FlowFileSchema, NodesFileSchema]) assertSame(text, schema);
  }
});

test("numbers where the schema expects text keep their text, elsewhere they stay numbers", () => {
  const text = [
    "org: { id: 0123, name: 1e3, settings: { max_concurrent_calls: 020 } }",
    "users:",
    "  - { extension: 0101, name: .inf, ring_time: 0x1f }",
    "dids: [{ number: +918065978001 }, { number: -.nan }]",
    "",
  ].join("\n");
  assertSame(text);
  const { oneWalk } = bothWays(text, OrgFileSchema);
  const data = (oneWalk as { data: Record<string, Record<string, unknown>[]> }).data;
  assert.equal(data.users, [{ extension: "0101", name: ".inf", ring_time: 31 }]);
  assert.equal(data.dids, [{ number: "+918065978001" }, { number: "-.nan" }]);
});

test("what the one walk leaves to the conversion reads as the conversion reads it", () => {
  const texts = [
    "", // empty: null
    "# only a comment\n",
    "just text\n",
    "- 1\n- two\n",
    "a: &x 1\nb: *x\n", // alias
    "org: &o { id: 1 }\nother: *o\n",
    "%YAML 1.1\n---\nbase: &b { x: 1 }\nm:\n  <<: *b\n  y: 2\n", // merge key (1.1)
    "%YAML 1.1\n---\nwhen: 2001-12-14\nok: yes\nn: 1:20\n", // 1.1 scalars
    "<<: { a: 1 }\n", // a plain "<<" key in YAML 1.2
    "__proto__: { polluted: true }\nconstructor: 1\ntoString: x\nhasOwnProperty: 2\n",
    "~: null key\n1: one\ntrue: yes\n0x10: hex\n1.5: float\n",
    "[a: 1, b]\n", // a pair inside a list
    "? [a, b]\n: complex key\n",
    "? { a: 1 }\n: map key\n",
    "s: !!str 123\nb: !!binary aGVsbG8=\n",
    "set: !!set { a, b }\n",
    "m: !!map { a: 1 }\nq: !!seq [1]\n",
    "tagged: !custom value\n",
    "a: 1\na: 2\n", // duplicate key (a syntax error, but the data still reads)
    "users:\n  - extension:\n    name: |\n      two\n      lines\n",
    "users: [{ extension: '1001' }, { extension: \"1002\" }, {extension: 1003}]\n",
  ];
  // The yaml package warns (on stderr) when it stringifies a collection used as a key.
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    for (const text of texts) assertSame(text);
  } finally {
    process.emitWarning = emitWarning;
  }
});

test("a plain file is read by the one walk, which leaves its document as parsed", () => {
  const { source } = parseYaml("users:\n  - { extension: 1001, name: Alice }\n", "f.yaml");
  const read = yamlData(source, OrgFileSchema);
  assert.equal(read, { data: { users: [{ extension: "1001", name: "Alice" }] } });
  // The conversion writes the number's text into the node; the one walk does not.
  assert.is(source.doc.getIn(["users", 0, "extension"]), 1001);
});

test("an alias bomb is still answered as a problem", () => {
  const text = [
    "a: &a [x, x, x, x, x, x, x, x, x, x]",
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
    "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
    "",
  ].join("\n");
  const read = yamlData(parseYaml(text, "f.yaml").source, OrgFileSchema);
  assert.ok("problem" in read);
});

test.run();
