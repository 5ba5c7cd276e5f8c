// The architecture's rules as tests (ARCHITECTURE.md "Layers", STYLE.md "Architecture rules are
// tests too"), like test/compiler/purity.test.ts: SQL only in src/store, the PBX_* environment
// only read in src/config.ts, and the wall clock only read behind src/clock.ts. Each exception
// is listed below with its reason; an entry that no longer matches anything fails too, so the
// lists only shrink.
import { readdirSync, readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";

const SRC = new URL("../../src/", import.meta.url);

/** Every source file under src/, as a path relative to it. */
const files = readdirSync(SRC, { recursive: true })
  .map(String)
  .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
  .filter((file) => !file.endsWith(".generated.ts"))
  .sort();

/**
 * The code of a file without its comments (a rule named in a comment is not a use of it), lines
 * kept in place. One pass from the left, so whichever starts first wins: a `/*` inside a line
 * comment or a string opens no block, and a `//` inside a string (a URL) is no comment.
 */
export function codeOf(source: string): string {
  return source.replace(
    /\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`/g,
    (token) => (token.startsWith("/") ? token.replace(/[^\n]/g, " ") : token),
  );
}

interface Rule {
  name: string;
  /** What a violation looks like in code. */
  pattern: RegExp;
  /** Where the rule does not apply (the rule's home). */
  home: (file: string) => boolean;
  /** Files allowed to break it, each with why. */
  exceptions: Record<string, string>;
}

/** Each `file:line: text` where `rule` is broken outside its home. */
export function violations(rule: Rule, sources: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, source] of sources) {
    if (rule.home(file)) continue;
    const lines = codeOf(source).split("\n");
    lines.forEach((line, i) => {
      rule.pattern.lastIndex = 0;
      if (rule.pattern.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

const TEST_HARNESS =
  "test harness against real processes (Asterisk, PostgreSQL): it waits on real time, which no injected clock can speed up";

const RULES: Rule[] = [
  {
    name: "SQL only in src/store",
    // Kysely's builders, its sql tag, a database driver, or SQL text (upper case, as written here).
    pattern:
      /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(|\bsql`|from "(kysely|pg|better-sqlite3)"|["'`]\s*(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX))\b/,
    home: (file) => file.startsWith("store/"),
    exceptions: {},
  },
  {
    name: "PBX_* environment read only in src/config.ts",
    pattern: /\.PBX_[A-Z0-9_]+|\[\s*["'`]PBX_[A-Z0-9_]+["'`]\s*\]/,
    home: (file) => file === "config.ts",
    exceptions: {},
  },
  {
    name: "wall clock read only behind src/clock.ts",
    pattern: /\bnew Date\(\s*\)|\bDate\.now\(\s*\)/,
    home: (file) => file === "clock.ts",
    exceptions: {
      "engine/testing/asterisk-instance.ts": TEST_HARNESS,
      "store/testing/postgres-cluster.ts": TEST_HARNESS,
    },
  },
];

const sources = new Map(files.map((file) => [file, readFileSync(new URL(file, SRC), "utf8")]));

for (const rule of RULES) {
  test(rule.name, () => {
    const found = violations(rule, sources);
    const unexplained = found.filter((line) => !(line.split(":")[0]! in rule.exceptions));
    assert.equal(unexplained, [], `${rule.name}:\n${unexplained.join("\n")}`);
  });

  test(`${rule.name}: every listed exception is still needed`, () => {
    const found = new Set(violations(rule, sources).map((line) => line.split(":")[0]!));
    const stale = Object.keys(rule.exceptions).filter((file) => !found.has(file));
    assert.equal(stale, [], `no longer break "${rule.name}"; remove them from its exceptions`);
  });
}

// Table row types (`*Row`, `*Table`: the store's Kysely shapes) stay in src/store: other layers
// work with domain and model types, so a column change stays the store's business. Imports span
// lines, so this rule reads whole import statements rather than lines.

/** Each `file: Name` where a row type is imported from src/store outside it. */
export function rowTypeImports(sources: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, source] of sources) {
    if (file.startsWith("store/")) continue;
    const imports = codeOf(source).matchAll(
      /\bimport\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["'`]([^"'`]*)["'`]/g,
    );
    for (const [, names, from] of imports) {
      if (!/(^|\/)store\//.test(from!) && !from!.startsWith("./store")) continue;
      for (const name of names!.split(",")) {
        const imported = name
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)[0]!;
        if (/^[A-Z]\w*(Row|Table)$/.test(imported)) found.push(`${file}: ${imported}`);
      }
    }
  }
  return found;
}

const ROW_TYPE_EXCEPTIONS: Record<string, string> = {
  "deploy/store-deploy-log.ts": "AppliedRevisionRow: the store-backed deploy log itself",
};

test("row types only in src/store", () => {
  const unexplained = rowTypeImports(sources).filter(
    (line) => !(line.split(":")[0]! in ROW_TYPE_EXCEPTIONS),
  );
  assert.equal(unexplained, [], `row types imported outside src/store:\n${unexplained.join("\n")}`);
});

test("row types only in src/store: every listed exception is still needed", () => {
  const found = new Set(rowTypeImports(sources).map((line) => line.split(":")[0]!));
  const stale = Object.keys(ROW_TYPE_EXCEPTIONS).filter((file) => !found.has(file));
  assert.equal(stale, [], "no longer import a row type; remove them from ROW_TYPE_EXCEPTIONS");
});

test("the row-type rule finds a planted import over several lines, and none in a comment", () => {
  const planted = 'import {\n  createX,\n  type UserRow,\n} from "../../store/user-repository.js";';
  assert.equal(rowTypeImports(new Map([["domain/x.ts", planted]])), ["domain/x.ts: UserRow"]);
  assert.equal(rowTypeImports(new Map([["domain/x.ts", `/* ${planted} */`]])), []);
  assert.equal(rowTypeImports(new Map([["store/x.ts", planted]])), [], "the store's own");
  assert.equal(
    rowTypeImports(
      new Map([["domain/x.ts", 'import { newWebhookRow } from "../store/webhook-repository.js";']]),
    ),
    [],
    "a function is not a row type",
  );
});

// The rules catch what they are for: a planted violation of each is found outside its home and
// ignored in a comment.
test("each rule finds a planted violation, and none in a comment", () => {
  const planted: Record<string, string> = {
    "SQL only in src/store": 'const rows = await db.selectFrom("users").selectAll().execute();',
    "PBX_* environment read only in src/config.ts": "const port = Number(process.env.PBX_PORT);",
    "wall clock read only behind src/clock.ts": "const at = new Date().toISOString();",
  };
  for (const rule of RULES) {
    const code = planted[rule.name]!;
    assert.is(violations(rule, new Map([["domain/x.ts", code]])).length, 1, rule.name);
    assert.is(violations(rule, new Map([["domain/x.ts", `// ${code}`]])).length, 0, rule.name);
    assert.is(violations(rule, new Map([["domain/x.ts", `/* ${code} */`]])).length, 0, rule.name);
    const afterLineComment = `// see /etc/*.conf\n${code}\n// */`;
    assert.is(violations(rule, new Map([["domain/x.ts", afterLineComment]])).length, 1, rule.name);
  }
  assert.is(
    violations(
      RULES[0]!,
      new Map([["domain/x.ts", 'throw new Error("Select a user from the list")']]),
    ).length,
    0,
    "plain English is not SQL",
  );
});

test.run();
