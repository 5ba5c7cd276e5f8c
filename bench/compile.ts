// npm run bench:compile [-- --orgs 1000 --runs 5]
// 1. Full compile + write of N orgs (TARGETS.md workload) through the function `pbxctl compile`
//    runs (compileToDirectory: one org at a time, files overwritten in place, writes overlapping
//    the next compile), against writing the same file sizes with a plain writeFileSync loop in
//    the same run; peak RSS.
// 2. One org's recompile + write with 10 and with 10,000 orgs already in the directory.
// Runs as plain tsc output (tsconfig.bench.json -> .bench-build/), like the shipped dist/: under
// tsx every call crosses the getters and name helpers of its transform, which cost a third of
// the compile time and would measure the loader, not the compiler.
// Before each timed side the page cache's dirty pages are flushed (`sync`), so neither side pays
// for writing back the other's 100 MB; without it the plain side alone swings 2x between runs.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { compileOrg } from "../src/compiler/index.js";
import { compileToDirectory } from "../src/deploy/compile-to-directory.js";
import type { OrgState } from "../src/model/org-state.js";
import { load, median, numberOption, runsOption } from "./figures.js";
import { syntheticOrg } from "./synthetic-org.js";

const ORGS = numberOption("orgs", 1000);
/** Rounds of compile + write and plain writes, alternated (`--rounds`, its older name, too). */
const ROUNDS = runsOption(numberOption("rounds", 5));
const SMALL = { users: 2, queues: 1, ivrs: 1, dids: 1 };
const GATEWAY = { environment: "prod", staging_endpoint: "staging-tunnel" } as const;

const ms = (ns: bigint) => Number(ns) / 1e6;
let peakRss = 0;
const sampleRss = () => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
};
const settle = () => execFileSync("sync");

const createdDirs = new Set<string>();
function writePlain(root: string, path: string, content: Buffer): void {
  const full = join(root, path);
  const dir = dirname(full);
  if (!createdDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    createdDirs.add(dir);
  }
  writeFileSync(full, content);
}

async function fullCompile(
  root: string,
  states: readonly OrgState[],
): Promise<{ ms: number; bytes: number; sizes: { path: string; size: number }[] }> {
  const start = process.hrtime.bigint();
  const { files } = await compileToDirectory(states, GATEWAY, root);
  const elapsed = ms(process.hrtime.bigint() - start);
  sampleRss();
  return {
    ms: elapsed,
    bytes: files.reduce((sum, f) => sum + f.bytes, 0),
    sizes: files.map((f) => ({ path: f.path, size: f.bytes })),
  };
}

/** Compile alone, output dropped: the share of the full run that is the compiler's. */
function compileOnly(states: readonly OrgState[]): number {
  const start = process.hrtime.bigint();
  for (const state of states) compileOrg(state);
  return ms(process.hrtime.bigint() - start);
}

function plainWrites(root: string, sizes: { path: string; size: number }[]): number {
  const largest = Math.max(...sizes.map((s) => s.size));
  const buffer = Buffer.alloc(largest, "exten => 1000,1,NoOp()\n");
  const start = process.hrtime.bigint();
  for (const { path, size } of sizes) writePlain(root, path, buffer.subarray(0, size));
  return ms(process.hrtime.bigint() - start);
}

/** Time to recompile one full-size org and write what changed, with `population` orgs around it. */
function oneOrgRecompile(population: number): number {
  const root = mkdtempSync(join(tmpdir(), "pbx-bench-one-"));
  try {
    for (let i = 1; i < population; i++) {
      for (const file of compileOrg(syntheticOrg(i, SMALL)).files)
        writePlain(root, file.path, Buffer.from(file.content));
    }
    const state = syntheticOrg(0);
    for (const file of compileOrg(state).files) {
      writePlain(root, file.path, Buffer.from(file.content));
    }
    const times: number[] = [];
    for (let run = 0; run < 30; run++) {
      state.users[1]!.name = `Renamed ${run}`; // an edit, so something really changes
      const start = process.hrtime.bigint();
      for (const file of compileOrg(state).files) {
        const full = join(root, file.path);
        if (readFileSync(full, "utf8") !== file.content) writeFileSync(full, file.content);
      }
      times.push(ms(process.hrtime.bigint() - start));
    }
    return median(times);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const compileRoot = mkdtempSync(join(tmpdir(), "pbx-bench-compile-"));
const plainRoot = mkdtempSync(join(tmpdir(), "pbx-bench-plain-"));
try {
  // Inputs are generated before timing: a store or YAML load would stand in for this.
  const states = Array.from({ length: ORGS }, (_, i) => syntheticOrg(i));
  sampleRss();
  const runs = [];
  for (let round = 0; round < ROUNDS; round++) {
    settle();
    const compiled = await fullCompile(compileRoot, states);
    settle();
    const plain = plainWrites(plainRoot, compiled.sizes);
    runs.push({ compiled, plain, compileOnly: compileOnly(states) });
  }
  const compiledMs = median(runs.map((r) => r.compiled.ms));
  const plainMs = median(runs.map((r) => r.plain));
  const ratios = runs.map((r) => (r.plain / r.compiled.ms) * 100);
  const mb = runs[0]!.compiled.bytes / 1e6;
  console.log(
    `bench:compile  ${ORGS} orgs x (50 users, 5 queues, 5 IVRs x 6 options, 20 DIDs), median of ${ROUNDS} (${load()})`,
  );
  console.log(
    `  output                     ${mb.toFixed(1)} MB in ${runs[0]!.compiled.sizes.length} files`,
  );
  console.log(
    `  compile + write            ${compiledMs.toFixed(0)} ms  = ${(ORGS / (compiledMs / 1000)).toFixed(0)} orgs/s, ${(mb / (compiledMs / 1000)).toFixed(1)} MB/s`,
  );
  console.log(
    `    compile alone             ${median(runs.map((r) => r.compileOnly)).toFixed(0)} ms (output dropped)`,
  );
  console.log(
    `  plain fs write, same bytes ${plainMs.toFixed(0)} ms  = ${(mb / (plainMs / 1000)).toFixed(1)} MB/s`,
  );
  console.log(
    `  compile+write / plain      ${median(ratios).toFixed(0)}% of plain fs throughput (median of per-round ratios ${ratios.map((r) => r.toFixed(0)).join(", ")}; target >= 90%)`,
  );
  console.log(
    `  peak RSS                   ${(Math.max(peakRss, process.resourceUsage().maxRSS * 1024) / 1e6).toFixed(0)} MB, inputs of all ${ORGS} orgs included (target < 512 MB)`,
  );
} finally {
  rmSync(compileRoot, { recursive: true, force: true });
  rmSync(plainRoot, { recursive: true, force: true });
}
const small = oneOrgRecompile(10);
const large = oneOrgRecompile(10_000);
console.log(
  `  one org recompile + write  ${small.toFixed(2)} ms with 10 orgs, ${large.toFixed(2)} ms with 10,000 orgs (ratio ${(large / small).toFixed(2)}, target <= 2)`,
);
