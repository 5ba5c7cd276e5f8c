import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Validate from "../../src/cli/commands/validate.js";
import { ROOT, runCommand } from "./run-command.js";

let dir = "";
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), "pbxctl-validate-"));
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ORG = ["org:", "  id: 11111111-2222-4333-8444-555555555555", "  name: Acme"];

test("the example orgs validate: exit 0 and a summary", async () => {
  const out = await runCommand(Validate, [join(ROOT, "orgs")]);
  assert.is(out.code, 0, out.stderr);
  assert.is(out.stderr, "");
  assert.match(out.stdout, "2 file(s): 0 error(s), 0 warning(s)");
});

test("a broken file: every problem on stderr as file:line:col, exit 1", async () => {
  const file = join(dir, "broken.yaml");
  await writeFile(
    file,
    [
      ...ORG,
      "ivrs:",
      "  - name: Main",
      "    extension: 3000",
      "    options:",
      "      - { digit: x, action_type: hangup }",
      "      - { digit: 2, action_type: queue, action_destination: 2099 }",
      "",
    ].join("\n"),
  );
  const out = await runCommand(Validate, [file]);
  assert.is(out.code, 1);
  const problems = out.stderr.split("\n").filter((line) => line.startsWith(file));
  assert.equal(problems, [
    `${file}:8:18 ivrs[0].options[0].digit: Invalid digit: x (allowed: 0-9, * or #)`,
    `${file}:9:61 ivrs[0].options[1].action_destination: no queue with number 2099`,
  ]);
  assert.match(out.stdout, "1 file(s): 2 error(s), 0 warning(s)");
  assert.not.match(out.stderr, /\bat .*\.ts:\d+/); // no stack trace
});

test("warnings alone exit 0 and are printed", async () => {
  const file = join(dir, "warn.yaml");
  await writeFile(
    file,
    [
      ...ORG,
      "trunks: [{ name: carrier, host: sip.example.net }]",
      "outbound_routes:",
      "  - { name: All, patterns: ['_X.'], trunk: carrier, caller_id_override: '+14155550100' }",
      "",
    ].join("\n"),
  );
  const out = await runCommand(Validate, [file]);
  assert.is(out.code, 0);
  assert.match(
    out.stderr,
    `${file}:6:73 outbound_routes[0].caller_id_override: warning: caller ID`,
  );
});

test("--json prints the diagnostics as data, with the same exit code", async () => {
  const file = join(dir, "json.yaml");
  await writeFile(file, [...ORG, "users: [{ extension: 1, name: A }]", ""].join("\n"));
  const out = await runCommand(Validate, [file, "--json"]);
  assert.is(out.code, 1);
  const json = JSON.parse(out.stdout);
  assert.is(json.errors, 1);
  assert.equal(json.diagnostics[0], {
    severity: "error",
    path: "users[0].extension",
    message: "must be 2-15 digits",
    file,
    line: 4,
    col: 22,
  });
});

test("a path that does not exist: one line on stderr, exit 1", async () => {
  const out = await runCommand(Validate, [join(dir, "missing")]);
  assert.is(out.code, 1);
  assert.match(out.error!.message, `${join(dir, "missing")}: no such file or directory`);
});

test("a directory without org files is an error, not a silent pass", async () => {
  const empty = join(dir, "empty");
  await mkdir(empty);
  const out = await runCommand(Validate, [empty]);
  assert.is(out.code, 1);
  assert.match(out.error!.message, `no org files (*.yaml) in ${empty}`);
});

/** Runs `body` with NO_COLOR set. */
async function withNoColor<T>(body: () => Promise<T>): Promise<T> {
  const before = process.env.NO_COLOR;
  process.env.NO_COLOR = "1";
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.NO_COLOR;
    else process.env.NO_COLOR = before;
  }
}

/** Runs `body` with stderr taken for a terminal (as a user at a shell has it). */
async function onTerminal<T>(body: () => Promise<T>): Promise<T> {
  const before = process.stderr.isTTY;
  process.stderr.isTTY = true;
  try {
    return await body();
  } finally {
    process.stderr.isTTY = before;
  }
}

test("on a terminal each problem shows its source line with a caret; piped, the line alone", async () => {
  const file = join(dir, "caret.yaml");
  await writeFile(
    file,
    [
      ...ORG,
      "ivrs:",
      "  - name: Main",
      '    extension: "3000"',
      "    options:",
      '      - digit: "1"',
      "        action_type: dance",
      "",
    ].join("\n"),
  );
  // NO_COLOR: the caret lines compare as plain text.
  const out = await withNoColor(() => onTerminal(() => runCommand(Validate, [file])));
  assert.is(out.code, 1);
  const lines = out.stderr.split("\n");
  const at = lines.findIndex((line) => line.startsWith(`${file}:9:22 `));
  assert.ok(at >= 0, out.stderr);
  assert.is(lines[at + 1], "  9 |         action_type: dance");
  assert.is(lines[at + 2], "    |                      ^");
  const piped = await runCommand(Validate, [file]);
  assert.is(piped.code, 1);
  assert.match(piped.stderr, `${file}:9:22 `);
  assert.not.match(piped.stderr, "  9 |", "no source lines when piped");
  assert.not.match(piped.stderr, "^", "no caret when piped");
  assert.not.match(piped.stderr, "\u001b[", "no colour when stderr is not a terminal");
});

test("an alias bomb is reported at file:line:col with its source line", async () => {
  const file = join(dir, "bomb.yaml");
  const rows = ["x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
  for (let i = 1; i <= 5; i++)
    rows.push(
      `x${i}: &a${i} [${Array(9)
        .fill(`*a${i - 1}`)
        .join(", ")}]`,
    );
  await writeFile(file, [...ORG, ...rows, ""].join("\n"));
  const out = await withNoColor(() => onTerminal(() => runCommand(Validate, [file])));
  assert.is(out.code, 1);
  assert.match(out.stderr, `${file}:5:10: aliases (*name) expand to too many nodes`);
  assert.match(out.stderr, "  5 | x1: &a1 [*a0");
  assert.not.match(out.stderr, "ReferenceError");
});

test.run();
