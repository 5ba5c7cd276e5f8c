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

/** The code of a file without its comments (a rule named in a comment is not a use of it). */
export function codeOf(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, " "))
    .replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
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
    exceptions: {
      "engine/index.ts":
        "engineKindFrom/amiOptionsFrom (PBX_ENGINE, PBX_AMI_*); issue-25b is moving per-node AMI settings this session: move them into config.ts after it lands",
      "engine/paths.ts":
        "resolveEnginePaths (PBX_DATA_DIR, PBX_ASTERISK_DIR, PBX_SOUNDS_DIR, PBX_RECORDINGS_DIR), which config.ts itself calls: to move into config.ts with the engine settings",
      "deploy/store-engine.ts":
        "gateway options (PBX_ENVIRONMENT, PBX_STAGING_ENDPOINT); src/deploy is issue-25b's this session",
      "deploy/progress.ts": "PBX_PROGRESS for the deploy progress lines; src/deploy is issue-25b's",
      "tts/select-engine.ts": "PBX_TTS_ENGINE: to move into config.ts",
      "domain/config/gitops.ts":
        "PBX_DATA_DIR default of the store-less commands: to move into config.ts",
      "cli/commands/status.ts": "PBX_DATA_DIR default: to move into config.ts",
      "cli/commands/rollback.ts": "PBX_ASTERISK_DIR presence check: to move into config.ts",
      "cli/commands/intake/serve.ts": "PBX_INTAKE_PORT, PBX_API_URL: to move into config.ts",
    },
  },
  {
    name: "wall clock read only behind src/clock.ts",
    pattern: /\bnew Date\(\s*\)|\bDate\.now\(\s*\)/,
    home: (file) => file === "clock.ts",
    exceptions: {
      "engine/testing/asterisk-instance.ts": TEST_HARNESS,
      "store/testing/postgres-cluster.ts": TEST_HARNESS,
      "deploy/deployer.ts":
        "deploy records' startedAt/appliedAt/savedAt; src/deploy is issue-25b's this session: give the Deployer a Clock after it lands",
      "deploy/store-deploys.ts": "deploy records' startedAt; src/deploy is issue-25b's",
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
