// npm run bench:compile [-- --orgs 1000]
// 1. Full compile + write of N orgs (TARGETS.md workload), streamed one org at a time, against
//    writing the same file sizes with plain fs in the same run; peak RSS.
// 2. One org's recompile + write with 10 and with 10,000 orgs already in the directory.
// Runs as plain tsc output (tsconfig.bench.json -> .bench-build/), like the shipped dist/: under
// tsx every call crosses the getters and name helpers of its transform, which cost a third of
// the compile time and would measure the loader, not the compiler.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { compileGateway, compileOrg, compileTopLevel } from "../src/compiler/index.js";
import type { GatewayOrg } from "../src/model/org-state.js";
import { syntheticOrg } from "./synthetic-org.js";

const argOrgs = process.argv.indexOf("--orgs");
const ORGS = argOrgs > 0 ? Number(process.argv[argOrgs + 1]) : 1000;
const SMALL = { users: 2, queues: 1, ivrs: 1, dids: 1 };

const ms = (ns: bigint) => Number(ns) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
let peakRss = 0;
const sampleRss = () => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
};

// Both sides write the same way: each directory created once, then one writeFileSync per file.
// Text is encoded into one reused buffer, as a writer of many files would, rather than into a
// fresh allocation per file.
const createdDirs = new Set<string>();
let scratch = Buffer.allocUnsafe(1 << 20);

function writeFile(root: string, path: string, content: string | Buffer): number {
  const full = join(root, path);
  const dir = dirname(full);
  if (!createdDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    createdDirs.add(dir);
  }
  if (typeof content !== "string") {
    writeFileSync(full, content);
    return content.length;
  }
  if (content.length * 3 > scratch.length) scratch = Buffer.allocUnsafe(content.length * 3);
  const size = scratch.write(content);
  writeFileSync(full, scratch.subarray(0, size));
  return size;
}

function fullCompile(root: string): {
  ms: number;
  compileMs: number;
  bytes: number;
  sizes: { path: string; size: number }[];
} {
  let elapsed = 0n;
  let compileOnly = 0n;
  let bytes = 0;
  const sizes: { path: string; size: number }[] = [];
  const gatewayOrgs: GatewayOrg[] = [];
  for (let i = 0; i < ORGS; i++) {
    const state = syntheticOrg(i); // generation is not timed: a store load would replace it
    const start = process.hrtime.bigint();
    const result = compileOrg(state);
    compileOnly += process.hrtime.bigint() - start;
    for (const file of result.files) {
      const size = writeFile(root, file.path, file.content);
      bytes += size;
      sizes.push({ path: file.path, size });
    }
    elapsed += process.hrtime.bigint() - start;
    gatewayOrgs.push({
      org_id: state.org.id,
      context_prefix: state.org.context_prefix,
      dids: state.dids.map((d) => ({
        number: d.number,
        routing_environment: d.routing_environment,
      })),
    });
    if (i % 50 === 0) sampleRss();
  }
  const start = process.hrtime.bigint();
  const rest = [
    ...compileGateway({
      environment: "prod",
      staging_endpoint: "staging-tunnel",
      orgs: gatewayOrgs,
    }).files,
    ...compileTopLevel(gatewayOrgs.map((o) => o.context_prefix)).files,
  ];
  for (const file of rest) {
    writeFile(root, file.path, file.content);
    bytes += Buffer.byteLength(file.content);
    sizes.push({ path: file.path, size: Buffer.byteLength(file.content) });
  }
  elapsed += process.hrtime.bigint() - start;
  sampleRss();
  return { ms: ms(elapsed), compileMs: ms(compileOnly), bytes, sizes };
}

function plainWrites(root: string, sizes: { path: string; size: number }[]): number {
  const largest = Math.max(...sizes.map((s) => s.size));
  const buffer = Buffer.alloc(largest, "exten => 1000,1,NoOp()\n");
  const start = process.hrtime.bigint();
  for (const { path, size } of sizes) writeFile(root, path, buffer.subarray(0, size));
  return ms(process.hrtime.bigint() - start);
}

/** Time to recompile one full-size org and write what changed, with `population` orgs around it. */
function oneOrgRecompile(population: number): number {
  const root = mkdtempSync(join(tmpdir(), "pbx-bench-one-"));
  try {
    for (let i = 1; i < population; i++) {
      for (const file of compileOrg(syntheticOrg(i, SMALL)).files)
        writeFile(root, file.path, file.content);
    }
    const state = syntheticOrg(0);
    for (const file of compileOrg(state).files) writeFile(root, file.path, file.content);
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
  const runs = [1, 2, 3].map(() => {
    const compiled = fullCompile(compileRoot);
    const plain = plainWrites(plainRoot, compiled.sizes);
    return { compiled, plain };
  });
  const compiledMs = median(runs.map((r) => r.compiled.ms));
  const plainMs = median(runs.map((r) => r.plain));
  const mb = runs[0]!.compiled.bytes / 1e6;
  console.log(
    `bench:compile  ${ORGS} orgs x (50 users, 5 queues, 5 IVRs x 6 options, 20 DIDs), median of 3`,
  );
  console.log(
    `  output                     ${mb.toFixed(1)} MB in ${runs[0]!.compiled.sizes.length} files`,
  );
  console.log(
    `  compile + write            ${compiledMs.toFixed(0)} ms  = ${(ORGS / (compiledMs / 1000)).toFixed(0)} orgs/s, ${(mb / (compiledMs / 1000)).toFixed(1)} MB/s`,
  );
  console.log(
    `    of which compiling        ${median(runs.map((r) => r.compiled.compileMs)).toFixed(0)} ms`,
  );
  console.log(
    `  plain fs write, same bytes ${plainMs.toFixed(0)} ms  = ${(mb / (plainMs / 1000)).toFixed(1)} MB/s`,
  );
  console.log(
    `  compile+write / plain      ${((plainMs / compiledMs) * 100).toFixed(0)}% of plain fs throughput (target >= 50%)`,
  );
  console.log(
    `  peak RSS                   ${(Math.max(peakRss, process.resourceUsage().maxRSS * 1024) / 1e6).toFixed(0)} MB (target < 512 MB)`,
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
