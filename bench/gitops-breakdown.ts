// `npm run bench:gitops -- --breakdown`: where one cold `validate` spends its wall time, end to
// end. The run is the built CLI under `node --cpu-prof`, which writes one profile per thread
// (the main thread and each load worker). V8 stamps profiles with the monotonic clock that
// `process.hrtime` reads, so the spawn, each thread's first and last sample and the exit line
// up on one time axis. Each thread's samples are put in categories by the first frame up the
// stack that names one (a sample in the `yaml` package under `readPlainYaml` or `parseYaml` is
// the parse; one under `hashOf` is reading files). The profiler costs a few percent, so the
// figures add up to a little more than an unprofiled run; the shares are what compare.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** What a frame's function (or module) says a sample was doing; checked from the leaf up. */
const CATEGORIES: { name: string; matches: (fn: string, url: string) => boolean }[] = [
  {
    name: "yaml parse (parser tokens, or parseDocument)",
    matches: (fn) => fn === "readPlainYaml" || fn === "parseYaml",
  },
  { name: "analysis beyond the parse", matches: (fn) => fn === "analyzeOrgSource" },
  {
    name: "result transfer (structured clone)",
    matches: (fn, url) => fn === "postMessage" || url.includes("messageport"),
  },
  {
    name: "reading, stat and hashing files",
    matches: (fn) => ["hashOf", "textAt", "fromDisk", "contentHash", "orgFilePaths"].includes(fn),
  },
  {
    name: "cache write (entries, pack, claims index)",
    matches: (fn, url) =>
      (url.includes("org-file-cache") && ["put", "save"].includes(fn)) ||
      (url.includes("claims-index") && fn === "record"),
  },
  { name: "cache open", matches: (fn, url) => url.includes("org-file-cache") && fn === "open" },
  {
    name: "checks across files, diagnostics, output",
    matches: (fn) => ["finishLoad", "printDiagnostics", "finish"].includes(fn),
  },
  {
    name: "module loading",
    matches: (_fn, url) =>
      url.startsWith("node:internal/modules") || url.startsWith("node:internal/bootstrap"),
  },
  { name: "garbage collection", matches: (fn) => fn === "(garbage collector)" },
  { name: "idle (waiting)", matches: (fn) => fn === "(idle)" },
];
const OTHER = "other (oclif, the loop, native)";

interface ThreadFigures {
  label: string;
  startMs: number;
  endMs: number;
  byCategory: Map<string, number>;
}

function threadFigures(profile: CpuProfile, label: string, spawnedUs: number): ThreadFigures {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const categoryOf = new Map<number, string>();
  const categorize = (id: number): string => {
    const known = categoryOf.get(id);
    if (known !== undefined) return known;
    const { functionName, url } = byId.get(id)!.callFrame;
    const own = CATEGORIES.find((c) => c.matches(functionName, url))?.name;
    const up = parent.get(id);
    const category = own ?? (up === undefined ? OTHER : categorize(up));
    categoryOf.set(id, category);
    return category;
  };
  const byCategory = new Map<string, number>();
  // A sample's time is the gap to the next one (the last sample's, to the profile's end).
  let at = profile.startTime;
  const stamps = profile.timeDeltas.map((delta) => (at += delta));
  profile.samples.forEach((id, k) => {
    const ms = ((stamps[k + 1] ?? profile.endTime) - stamps[k]!) / 1000;
    const category = categorize(id);
    byCategory.set(category, (byCategory.get(category) ?? 0) + ms);
  });
  return {
    label,
    startMs: (profile.startTime - spawnedUs) / 1000,
    endMs: (profile.endTime - spawnedUs) / 1000,
    byCategory,
  };
}

/**
 * Runs `node <cli> <args>` in `cwd` once under the CPU profiler (after `prepare`) and returns the
 * breakdown as printable lines.
 */
export function coldBreakdown(
  cli: string,
  cwd: string,
  args: string[],
  prepare: () => void,
): string[] {
  const dir = mkdtempSync(join(tmpdir(), "pbxctl-breakdown-"));
  try {
    prepare();
    const spawnedUs = Number(process.hrtime.bigint() / 1000n);
    const child = spawnSync(process.execPath, ["--cpu-prof", "--cpu-prof-dir", dir, cli, ...args], {
      cwd,
      encoding: "utf8",
      maxBuffer: 1 << 30,
      env: { ...process.env, NO_COLOR: "1" },
    });
    const exitedMs = (Number(process.hrtime.bigint() / 1000n) - spawnedUs) / 1000;
    if (child.status !== 0) throw new Error(`pbxctl ${args.join(" ")} exited ${child.status}`);
    // CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile: thread 0 is the main thread.
    const threads = readdirSync(dir)
      .map((name) => ({ name, thread: Number(name.split(".")[4]) }))
      .sort((a, b) => a.thread - b.thread)
      .map(({ name, thread }) =>
        threadFigures(
          JSON.parse(readFileSync(join(dir, name), "utf8")) as CpuProfile,
          thread === 0 ? "main thread" : `worker ${thread}`,
          spawnedUs,
        ),
      );
    const ms = (value: number) => `${value.toFixed(0).padStart(5)} ms`;
    const lines = [`cold validate, one profiled run: ${ms(exitedMs)} from spawn to exit`];
    const main = threads[0]!;
    lines.push(`  process start (spawn to the main thread's first sample) ${ms(main.startMs)}`);
    for (const thread of threads) {
      lines.push(
        `  ${thread.label}: from ${ms(thread.startMs)} to ${ms(thread.endMs)} after spawn`,
      );
      const rows = [...thread.byCategory]
        .filter(([, value]) => value >= 0.5)
        .sort((a, b) => b[1] - a[1]);
      for (const [category, value] of rows) lines.push(`    ${category.padEnd(44)} ${ms(value)}`);
    }
    const lastEnd = Math.max(...threads.map((t) => t.endMs));
    lines.push(
      `  exit (the last thread's last sample to the process's end) ${ms(exitedMs - lastEnd)}`,
    );
    return lines;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
