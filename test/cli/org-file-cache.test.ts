// The analysis cache beside the org files (docs/gitops.md, "The cache"): used for unchanged
// files, never for a changed file, another pbxctl version or a corrupted entry; secrets never
// in it; the checks across files still see every file when only one changed; and every
// command's output the same with the cache cold, warm, and off.
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import Apply from "../../src/cli/commands/apply.js";
import Compile from "../../src/cli/commands/compile.js";
import Plan from "../../src/cli/commands/plan.js";
import Validate from "../../src/cli/commands/validate.js";
import { compileTree } from "../../src/cli/lib/compiled-tree.js";
import {
  CACHE_DIR,
  cacheVersion,
  contentHash,
  OrgFileCache,
  PACK,
  RACY_WINDOW_MS,
  readPackFile,
  type StatRow,
  writePackFile,
} from "../../src/cli/lib/org-file-cache.js";
import { DecodedPack } from "../../src/cli/lib/org-file-pack.js";
import { loadOrgFiles } from "../../src/cli/lib/org-files.js";
import { planTrees } from "../../src/cli/lib/plan.js";
import { formatDiagnostic } from "../../src/model/diagnostic.js";
import { loadOrgSources } from "../../src/model/files.js";
import { OrgFileError } from "../../src/model/org-file-paths.js";
import { ROOT, runCommand } from "./run-command.js";

let repo = "";
let orgs = "";
const cwd = process.cwd();

function git(...args: string[]): void {
  execFileSync("git", args, {
    cwd: repo,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.test",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.test",
    },
  });
}

test.before.each(() => {
  repo = mkdtempSync(join(tmpdir(), "pbxctl-cache-"));
  orgs = join(repo, "orgs");
  mkdirSync(orgs);
  for (const name of ["acme.yaml", "globex.yaml"]) {
    cpSync(join(ROOT, "orgs", name), join(orgs, name));
  }
  git("init", "-q");
  git("add", ".");
  git("commit", "-qm", "orgs");
});
test.after.each(() => {
  process.chdir(cwd);
  rmSync(repo, { recursive: true, force: true });
});

const packFile = () => join(orgs, CACHE_DIR, cacheVersion(), PACK);
const readPack = (file = packFile(), version = cacheVersion()) => {
  const pack = readPackFile(file, version);
  assert.ok(pack, `${file} reads back as a pack`);
  return pack as { entries: Record<string, PackEntry>; files: Record<string, StatRow> };
};
const writePack = (
  pack: ReturnType<typeof readPack>,
  file = packFile(),
  version = cacheVersion(),
) => writePackFile(file, version, pack);
type PackEntry = { after: object[]; summary: { slug: string } | null };

function edit(name: string, from: string, to: string): void {
  const file = join(orgs, name);
  const text = readFileSync(file, "utf8");
  assert.ok(text.includes(from), `${name} contains ${from}`);
  writeFileSync(file, text.replace(from, to));
}

/** Adds a made-up problem to the cached entry of the file whose org has `slug`. */
async function plantProblem(slug: string, message: string): Promise<void> {
  const pack = readPack();
  const entry = Object.values(pack.entries).find((e) => e.summary?.slug === slug);
  assert.ok(entry, `an entry for ${slug}`);
  entry.after.push({ severity: "error", path: "org.name", message, line: 1, col: 1 });
  await writePack(pack);
}

test("an unchanged file is answered from the cache; a changed file never is", async () => {
  const first = await runCommand(Validate, [orgs]);
  assert.is(first.code, 0, first.stderr);
  assert.ok(existsSync(packFile()), "the cache is written beside the org files");
  assert.is(readFileSync(join(orgs, CACHE_DIR, ".gitignore"), "utf8").includes("*"), true);

  await plantProblem("acme", "planted in the cache");
  const cached = await runCommand(Validate, [orgs]);
  assert.match(cached.stderr, "planted in the cache", "the entry was used");

  edit("acme.yaml", "name: Bob Iyer", "name: Bob Iyer Jr");
  const changed = await runCommand(Validate, [orgs]);
  assert.is(changed.code, 0, changed.stderr);
  assert.not.match(changed.stderr, "planted in the cache");

  edit("acme.yaml", "extension: 1002", "extension: 10x2");
  const broken = await runCommand(Validate, [orgs]);
  assert.is(broken.code, 1);
  assert.match(broken.stderr, /acme\.yaml:\d+:\d+ users\[1\]\.extension: /);
});

test("a one-file change appends to the pack instead of writing it again; later runs read the record", async () => {
  assert.is((await runCommand(Validate, [orgs])).code, 0);
  const written = readFileSync(packFile());
  edit("acme.yaml", "extension: 1002", "extension: 10x2");
  const broken = await runCommand(Validate, [orgs]);
  assert.is(broken.code, 1);
  const appended = readFileSync(packFile());
  assert.ok(appended.length > written.length, "a record was appended");
  assert.equal(appended.subarray(0, written.length), written, "the pack's bytes are kept");
  // The appended entry answers the next run (a planted problem in it is reported).
  const pack = readPack();
  assert.is(Object.keys(pack.entries).length, 3, "the old and new text of acme, and globex");
  await plantProblem("globex", "planted in the cache");
  const again = await runCommand(Validate, [orgs]);
  assert.match(again.stderr, "planted in the cache");
  assert.match(again.stderr, /acme\.yaml:\d+:\d+ users\[1\]\.extension: /);
  edit("acme.yaml", "extension: 10x2", "extension: 1002");
  const fixed = await runCommand(Validate, [orgs]);
  assert.not.match(fixed.stderr, "users[1].extension");
  assert.match(fixed.stderr, "planted in the cache");
});

test("an entry of another pbxctl version is never used", async () => {
  // No state asked for: what the cache holds is enough.
  const options = { env: {}, cache: true, cacheVersion: "version-a", statesOf: new Set<string>() };
  await loadOrgFiles([orgs], options);
  const pack = join(orgs, CACHE_DIR, "version-a", PACK);
  const stored = readPack(pack, "version-a");
  const entry = Object.values(stored.entries)[0]!;
  entry.after.push({ severity: "error", path: "", message: "from version a", line: 1, col: 1 });
  await writePack(stored, pack, "version-a");

  const sameVersion = await loadOrgFiles([orgs], options);
  assert.ok(sameVersion.diagnostics.some((d) => d.message === "from version a"));
  const other = await loadOrgFiles([orgs], { ...options, cacheVersion: "version-b" });
  assert.equal(other.diagnostics, []);
  // The other version's cache is replaced, not kept beside.
  assert.equal(readdirSync(join(orgs, CACHE_DIR)).sort(), [".gitignore", "version-b"]);
});

test("a corrupted cache is ignored and rewritten", async () => {
  const clean = await runCommand(Validate, [orgs, "--json"]);
  writeFileSync(packFile(), '{"format": 1, "entries": {"trunc');
  const afterGarbage = await runCommand(Validate, [orgs, "--json"]);
  assert.is(afterGarbage.stdout, clean.stdout);
  assert.is(Object.keys(readPack().entries).length, 2, "rewritten with both files");

  // One entry of the wrong shape: that file is analyzed again, the other is still used.
  const pack = readPack();
  const [first, second] = Object.keys(pack.entries);
  const secondSlug = pack.entries[second!]!.summary!.slug;
  (pack.entries as Record<string, unknown>)[first!] = { before: 5 };
  await writePack(pack);
  await plantProblem(secondSlug, "still cached");
  const afterBadEntry = await runCommand(Validate, [orgs]);
  assert.is(afterBadEntry.code, 1);
  assert.match(afterBadEntry.stderr, "still cached");
  const rewritten = readPack().entries[first!] as PackEntry & { lint: boolean };
  assert.is(rewritten.lint, true, "the corrupted entry was replaced");

  // One entry's bytes changed on disk (its check no longer matches): the same.
  const bytes = readFileSync(packFile());
  const at = bytes.lastIndexOf(Buffer.from(`"slug":"${secondSlug}"`));
  assert.ok(at > 0);
  bytes.write(`"slug":"${secondSlug.replace(/.$/, "X")}"`, at);
  writeFileSync(packFile(), bytes);
  const afterFlip = await runCommand(Validate, [orgs, "--json"]);
  assert.is(afterFlip.stdout, clean.stdout, "the changed entry was not used");
  assert.is(readPack().entries[first!] !== undefined, true);
  assert.not.match(JSON.stringify(readPack().entries), "still cached", "analyzed again");
});

test("secrets are read from the environment on every run and never cached", async () => {
  edit(
    "acme.yaml",
    "    # password_env: ACME_TRUNK_PASSWORD",
    "    password_env: ACME_TRUNK_PASSWORD",
  );
  delete process.env.ACME_TRUNK_PASSWORD;
  const missing = await runCommand(Validate, [orgs]);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, "environment variable ACME_TRUNK_PASSWORD is not set");
  process.env.ACME_TRUNK_PASSWORD = "trunk-secret-value";
  try {
    const set = await runCommand(Validate, [orgs]);
    assert.is(set.code, 0, set.stderr);
    const out = join(repo, "out");
    const compiled = await runCommand(Compile, [orgs, "--out", out]);
    assert.is(compiled.code, 0, compiled.stderr);
    assert.not.match(readFileSync(packFile(), "utf8"), "trunk-secret-value");
  } finally {
    delete process.env.ACME_TRUNK_PASSWORD;
  }
});

test("a clash across files is found when only one of the two files changed", async () => {
  assert.is((await runCommand(Validate, [orgs])).code, 0);
  // globex takes a number acme holds; acme's file is unchanged and answered from the cache.
  edit("globex.yaml", "number: +918065978021", "number: +918065978001");
  const validate = await runCommand(Validate, [orgs]);
  assert.is(validate.code, 1);
  assert.match(validate.stderr, "DID +918065978001 is also assigned in");

  process.chdir(repo);
  const plan = await runCommand(Plan, ["orgs", "--base", "HEAD"]);
  assert.is(plan.code, 1);
  assert.match(plan.stderr, "DID +918065978001 is also assigned in");
  const apply = await runCommand(Apply, [
    "orgs",
    "--changed-since",
    "HEAD",
    "--dry-run",
    "--data-dir",
    join(repo, "var"),
  ]);
  assert.is(apply.code, 1);
  assert.match(apply.stderr, "DID +918065978001 is also assigned in");
  assert.match(apply.error!.message, "1 error(s) in org files");
});

test("a change that removes a clash clears it; the claims index answers as a full check does", async () => {
  edit("globex.yaml", "number: +918065978021", "number: +918065978001");
  const clash = await runCommand(Validate, [orgs]);
  assert.is(clash.code, 1);
  assert.ok(existsSync(join(orgs, CACHE_DIR, cacheVersion(), "claims.index")));
  // The unchanged acme keeps its number; globex, the changed file, gives it up.
  edit("globex.yaml", "number: +918065978001", "number: +918065978021");
  const cleared = await runCommand(Validate, [orgs]);
  const full = await runCommand(Validate, [orgs, "--no-cache"]);
  assert.is(cleared.code, 0, cleared.stderr);
  assert.is(cleared.stdout, full.stdout);
  assert.is(cleared.stderr, full.stderr);
  // And back: found again from the index's journal, the same as a full check.
  edit("globex.yaml", "number: +918065978021", "number: +918065978001");
  const again = await runCommand(Validate, [orgs]);
  const againFull = await runCommand(Validate, [orgs, "--no-cache"]);
  assert.is(again.code, 1);
  assert.match(again.stderr, "DID +918065978001 is also assigned in");
  assert.is(again.stderr, againFull.stderr);
});

test("plan --base: a clash at the revision between a changed and an unchanged file is found from the index", async () => {
  // Committed with a clash (a merge of two valid branches can hold one); fixed in the tree.
  edit("globex.yaml", "number: +918065978021", "number: +918065978001");
  git("commit", "-qam", "clash");
  edit("globex.yaml", "number: +918065978001", "number: +918065978021");
  process.chdir(repo);
  assert.is((await runCommand(Validate, ["orgs"])).code, 0);
  const plan = await runCommand(Plan, ["orgs", "--base", "HEAD"]);
  const full = await runCommand(Plan, ["orgs", "--base", "HEAD", "--no-cache"]);
  assert.is(plan.code, 1);
  assert.match(
    plan.stderr,
    /HEAD:orgs\/globex\.yaml:\d+:\d+ dids\[\d\]\.number: DID \+918065978001/,
  );
  assert.match(plan.error!.message, "the org files at HEAD have errors");
  assert.is(plan.stderr, full.stderr);
});

test("a clash placed in the unchanged file: its cached summary places it as a parse would", async () => {
  assert.is((await runCommand(Validate, [orgs])).code, 0);
  // acme (the earlier file) takes globex's number: globex, unchanged and answered from the
  // cache by its keys alone, gets the problem, at the place its full summary holds.
  edit("acme.yaml", "number: +918065978001", "number: +918065978021");
  const cached = await runCommand(Validate, [orgs]);
  const parsed = await runCommand(Validate, [orgs, "--no-cache"]);
  assert.is(cached.code, 1);
  assert.match(
    cached.stderr,
    /globex\.yaml:\d+:\d+ dids\[\d\]\.number: DID \+918065978021 is also assigned in/,
  );
  assert.is(cached.stderr, parsed.stderr);
});

test("a plain entry's bytes changed, found when a clash is placed in its file: that file is analyzed again", async () => {
  assert.is((await runCommand(Validate, [orgs])).code, 0);
  const globex = contentHash(readFileSync(join(orgs, "globex.yaml")));
  assert.ok(
    DecodedPack.open(packFile(), cacheVersion())?.flags(globex)?.plain,
    "globex's entry is plain: a run reads its bytes only to place a clash in it",
  );
  const bytes = readFileSync(packFile());
  const at = bytes.lastIndexOf(Buffer.from('"slug":"globex"'));
  assert.ok(at > 0);
  bytes.write('"slug":"globeX"', at);
  writeFileSync(packFile(), bytes);
  edit("acme.yaml", "number: +918065978001", "number: +918065978021");
  const cached = await runCommand(Validate, [orgs]);
  const parsed = await runCommand(Validate, [orgs, "--no-cache"]);
  assert.is(cached.code, 1);
  assert.match(cached.stderr, /globex\.yaml:\d+:\d+ dids\[\d\]\.number: DID \+918065978021/);
  assert.is(cached.stderr, parsed.stderr);
  assert.is(cached.stdout, parsed.stdout);
  const rewritten = readPack().entries[globex];
  assert.is(rewritten?.summary?.slug, "globex", "the entry was written again from the file");
});

test("slugs are unique across files too", async () => {
  edit("globex.yaml", "slug: globex", "slug: acme");
  const load = await loadOrgFiles([orgs], { env: {}, cache: true });
  assert.equal(load.crossFile.map(formatDiagnostic), [
    `${join(orgs, "globex.yaml")}:7:9 org.slug: slug acme is also used in ${join(orgs, "acme.yaml")}`,
  ]);
});

test("nested context prefixes across files: both files new, one changed beside a cached one, --no-cache the same", async () => {
  const rule = "one organization's prefix may not begin another's";
  const acmePrefix = "org_4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d_";
  // Both new (no cache yet): globex's org_ begins acme's default prefix; globex, the later file,
  // gets the problem on its context_prefix value, naming acme's file.
  edit("globex.yaml", "context_prefix: globex_", "context_prefix: org_");
  const nested = `${join(orgs, "globex.yaml")}:8:19 org.context_prefix: context prefix org_ overlaps ${acmePrefix} in ${join(orgs, "acme.yaml")}: ${rule}`;
  const cold = await loadOrgFiles([orgs], { env: {}, cache: true });
  assert.equal(cold.crossFile.map(formatDiagnostic), [nested]);
  const validate = await runCommand(Validate, [orgs]);
  const off = await runCommand(Validate, [orgs, "--no-cache"]);
  assert.is(validate.code, 1);
  assert.match(validate.stderr, `org.context_prefix: context prefix org_ overlaps ${acmePrefix}`);
  assert.is(validate.stderr, off.stderr);
  assert.equal(
    (await loadOrgFiles([orgs], { env: {}, cache: true })).crossFile.map(formatDiagnostic),
    [nested],
    "warm",
  );

  // Fixed, and both files cached; then acme (the earlier file) alone changes to a prefix that
  // globex_ begins: globex, unchanged and answered from the cache, gets the problem.
  edit("globex.yaml", "context_prefix: org_", "context_prefix: globex_");
  assert.is((await runCommand(Validate, [orgs])).code, 0);
  edit("acme.yaml", `# context_prefix: ${acmePrefix}`, "context_prefix: globex_sales_");
  const changed = await loadOrgFiles([orgs], { env: {}, cache: true });
  assert.equal(changed.crossFile.map(formatDiagnostic), [
    `${join(orgs, "globex.yaml")}:8:19 org.context_prefix: context prefix globex_ overlaps globex_sales_ in ${join(orgs, "acme.yaml")}: ${rule}`,
  ]);
  const cached = await runCommand(Validate, [orgs]);
  const parsed = await runCommand(Validate, [orgs, "--no-cache"]);
  assert.is(cached.code, 1);
  assert.match(cached.stderr, "context prefix globex_ overlaps globex_sales_ in");
  assert.is(cached.stderr, parsed.stderr);
  assert.is(cached.stdout, parsed.stdout);

  // plan --base and apply --changed-since refuse it as validate does (apply would answer 409).
  process.chdir(repo);
  const plan = await runCommand(Plan, ["orgs", "--base", "HEAD"]);
  assert.is(plan.code, 1);
  assert.match(plan.stderr, "context prefix globex_ overlaps globex_sales_ in");
});

/** Runs `argv` three times: cache cold, cache warm, --no-cache; all three must print the same. */
async function sameEveryWay(command: Parameters<typeof runCommand>[0], argv: string[]) {
  rmSync(join(orgs, ".pbxctl"), { recursive: true, force: true });
  const cold = await runCommand(command, argv);
  const warm = await runCommand(command, argv);
  const off = await runCommand(command, [...argv, "--no-cache"]);
  for (const [name, run] of [
    ["warm", warm],
    ["--no-cache", off],
  ] as const) {
    assert.is(run.code, cold.code, `${name} exit code`);
    assert.is(run.stdout, cold.stdout, `${name} stdout`);
    assert.is(run.stderr, cold.stderr, `${name} stderr`);
  }
  return cold;
}

test("validate, plan and compile print and write the same with the cache cold, warm and off", async () => {
  // Problems of every kind: a lint warning, a schema error, a plaintext password warning.
  edit("acme.yaml", "timeout: 5 #", "timeout: 0 #");
  writeFileSync(join(orgs, "broken.yaml"), "org:\n  id: not-a-uuid\n  name: Broken\n");
  const validate = await sameEveryWay(Validate, [orgs]);
  assert.is(validate.code, 1);
  assert.match(validate.stderr, "warning:");
  const json = await sameEveryWay(Validate, [orgs, "--json"]);
  assert.ok(JSON.parse(json.stdout).diagnostics.length >= 2);
  rmSync(join(orgs, "broken.yaml"));

  git("add", ".");
  git("commit", "-qm", "lint");
  edit("acme.yaml", "max_wait: 120", "max_wait: 90");
  edit("globex.yaml", "number: +918065978021", "number: +918065978022");
  process.chdir(repo);
  const plan = await sameEveryWay(Plan, ["orgs", "--base", "HEAD"]);
  assert.is(plan.code, 2, plan.stderr);
  assert.match(plan.stdout, "gateway/extensions.conf", "a DID moved: the gateway is compared");
  assert.match(plan.stdout, /Plan: 0 to add, \d+ to change, 0 to remove\./);

  const trees: Record<string, string>[] = [];
  for (const flags of [[], [], ["--no-cache"]]) {
    const out = join(repo, `out-${trees.length}`);
    const run = await runCommand(Compile, ["orgs", "--out", out, ...flags]);
    assert.is(run.code, 0, run.stderr);
    const files: Record<string, string> = {};
    for (const path of readdirSync(out, { recursive: true }) as string[]) {
      const full = join(out, path);
      if (path.endsWith(".conf")) files[path] = readFileSync(full, "utf8");
    }
    trees.push(files);
  }
  assert.ok(Object.keys(trees[0]!).length > 10);
  assert.equal(trees[1], trees[0]);
  assert.equal(trees[2], trees[0]);
});

test("plan --base compiles only what changed, yet plans exactly the whole tree's change", async () => {
  const before = loadOrgSources(
    ["acme.yaml", "globex.yaml"].map((name) => ({
      file: name,
      text: readFileSync(join(orgs, name), "utf8"),
    })),
    {},
  );
  edit("globex.yaml", "number: +918065978021", "number: +918065978023");
  edit("acme.yaml", "max_wait: 120", "max_wait: 90");
  const after = loadOrgSources(
    ["acme.yaml", "globex.yaml"].map((name) => ({
      file: name,
      text: readFileSync(join(orgs, name), "utf8"),
    })),
    {},
  );
  const gateway = { environment: "prod", staging_endpoint: "staging-tunnel" } as const;
  const whole = planTrees(
    compileTree(
      before.orgs.map((o) => o.state),
      gateway,
    ).files,
    compileTree(
      after.orgs.map((o) => o.state),
      gateway,
    ).files,
  );
  process.chdir(repo);
  const plan = await runCommand(Plan, ["orgs", "--base", "HEAD", "--json"]);
  assert.is(plan.code, 2, plan.stderr);
  const result = JSON.parse(plan.stdout) as typeof whole;
  assert.equal(result.files, whole.files);
  assert.equal(result.reloads, whole.reloads);
  assert.is(result.diff, whole.diff);
});

const noProblems = {
  state: null,
  before: [],
  after: [],
  secrets: [],
  rejected: [],
  summary: null,
  extra: [],
};

test("a file that cannot be read is refused by name, with the cache and without", async () => {
  await loadOrgFiles([orgs], { env: {}, cache: true });
  mkdirSync(join(orgs, "folder.yaml"));
  for (const cache of [true, false]) {
    try {
      await loadOrgFiles([orgs], { env: {}, cache });
      assert.unreachable("a directory named like an org file loaded");
    } catch (error) {
      assert.instance(error, OrgFileError);
      assert.is((error as Error).message, `${join(orgs, "folder.yaml")}: cannot be read`);
    }
  }
});

test("stat index: a file changed within the racy window is hashed again, even with the same stat", async () => {
  // Explicit stamps: the case no clock can make on demand, a second write that keeps size, mtime,
  // ctime and inode (a file system with coarse time stamps, written twice within one tick).
  const changedAt = Date.parse("2026-03-01T10:00:00.000Z");
  const stamp = { size: 120, mtimeMs: changedAt, ctimeMs: changedAt, ino: 42 };
  const hash = contentHash("the text first read");
  const open = () => OrgFileCache.open(orgs, "version-racy");

  const racy = await open();
  racy.put(hash, noProblems, false);
  // Read half a second after its last change: within the window, so the stat proves nothing.
  racy.recordStat("acme.yaml", stamp, hash, changedAt + 500);
  await racy.save();
  assert.is((await open()).knownHash("acme.yaml", stamp), undefined, "racy: read and hashed again");

  const settled = await open();
  settled.put(hash, noProblems, false);
  settled.recordStat("acme.yaml", stamp, hash, changedAt + RACY_WINDOW_MS);
  await settled.save();
  const reopened = await open();
  assert.is(reopened.knownHash("acme.yaml", stamp), hash, "settled: the stat is trusted");
  for (const other of [
    { size: 121 },
    { mtimeMs: changedAt + 1 },
    { ctimeMs: changedAt + 1 },
    { ino: 43 },
  ]) {
    assert.is(
      reopened.knownHash("acme.yaml", { ...stamp, ...other }),
      undefined,
      JSON.stringify(other),
    );
  }
});

test("stat index: same size and mtime (fs.utimes), other content: the new text is analyzed", async () => {
  const acme = join(orgs, "acme.yaml");
  const lastChange = new Date("2026-03-01T10:00:00.000Z");
  utimesSync(acme, lastChange, lastChange);
  // The run starts long after the file changed (its ctime, set by utimes, is now): recorded.
  const later = () => new Date(Date.now() + 3_600_000);
  const options = { env: {}, cache: true, statesOf: new Set<string>(), clock: later };
  await loadOrgFiles([orgs], options);
  const row = readPack().files["acme.yaml"];
  assert.ok(row, "the settled file has a stat row");
  assert.is(row[1], lastChange.getTime());

  // The index is what answers an unchanged file: a row pointing at globex's text is believed.
  const pack = readPack();
  pack.files["acme.yaml"] = [...row.slice(0, 4), pack.files["globex.yaml"]![4]] as typeof row;
  await writePack(pack);
  const believed = await loadOrgFiles([orgs], options);
  assert.is(believed.summaries[0]!.summary.slug, "globex");

  // Same size, same mtime, other text: re-hashed, never answered by the row.
  const text = readFileSync(acme, "utf8");
  writeFileSync(acme, text.replace("slug: acme\n", "slug: acmf\n"));
  utimesSync(acme, lastChange, lastChange);
  assert.is(statSync(acme).size, row[0]);
  assert.is(statSync(acme).mtimeMs, row[1]);
  const changed = await loadOrgFiles([orgs], options);
  assert.is(changed.summaries[0]!.summary.slug, "acmf");

  // A file written just now is not recorded at all (the run's clock within the window).
  const justNow = await loadOrgFiles([orgs], { ...options, clock: () => new Date() });
  assert.is(justNow.summaries[0]!.summary.slug, "acmf");
  writeFileSync(join(orgs, "acme.yaml"), text);
  await loadOrgFiles([orgs], { ...options, clock: () => new Date() });
  assert.is(
    readPack().files["acme.yaml"],
    undefined,
    "a file changed within the window has no row",
  );
});

test.run();
