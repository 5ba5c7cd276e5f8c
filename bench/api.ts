// npm run bench:api [-- --runs 5 --duration 10 --only startup|throughput|metrics]
// TARGETS.md bench:api, every figure measured in this run and repeated `--runs` times (medians
// printed, each run's figure and the load average beside them):
//  - start-up: `pbxctl --help`; `pbxctl serve` from spawn to the first 200 on /health on a fresh
//    data directory, with the server's CPU time at that moment; idle RSS;
//  - authenticated GET /users (50 users) with autocannon, 100 connections, against a bare Koa
//    JSON handler serving the same body (the floor), each server in its own process, the two
//    loaded alternately so each run's ratio sees one machine load;
//  - the cost of the metrics: the same GET /users on the server with and without its Prometheus
//    instrumentation (startServer's `metrics: null`), alternated, medians compared;
//  - beside each req/s, the server process's CPU per request (/proc/<pid>/stat), which a busy
//    shared machine does not move the way it moves req/s.
// `--only` runs one part (the start-up alone takes seconds, the others minutes).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMetrics } from "../src/metrics/registry.js";
import { load as loadAverage, median, numberOption, runsOption } from "./figures.js";
import {
  ADMIN_PASSWORD,
  freePort,
  loadUrls,
  root,
  seedUsers,
  startServe,
  stop,
  waitFor,
} from "./serve-load.js";

const DURATION = numberOption("duration", 10);
const RUNS = runsOption();
const onlyAt = process.argv.indexOf("--only");
const ONLY = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined;
const part = (name: "startup" | "throughput" | "metrics") => ONLY === undefined || ONLY === name;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

interface Startup {
  help: number[];
  /** Spawn to the first 200 on /health, wall ms. */
  serve: number[];
  /** The server's CPU ms (every thread) when /health first answered. */
  serveCpu: number[];
  rss: number[];
  loads: string[];
}

async function startup(runs: number): Promise<Startup> {
  const figures: Startup = { help: [], serve: [], serveCpu: [], rss: [], loads: [] };
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    spawnSync(process.execPath, [join(root, "bin/run.js"), "--help"], { stdio: "ignore" });
    figures.help.push(performance.now() - start);
  }
  for (let i = 0; i < runs; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), "pbx-bench-api-"));
    const port = await freePort();
    const start = performance.now();
    const child = startServe(dataDir, port);
    await waitFor(`http://127.0.0.1:${port}/health`, child);
    figures.serve.push(performance.now() - start);
    figures.serveCpu.push(cpuSeconds(child.pid!) * 1000);
    figures.loads.push(loadAverage());
    await new Promise((r) => setTimeout(r, 1000)); // idle
    figures.rss.push(rssMb(child.pid!));
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
  return figures;
}

/** Clock ticks per second of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

/** CPU seconds (user + system) `pid` has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime
}

/**
 * Load on `url` for DURATION; req/s, p99, and the server's (`pid`'s) CPU per request: on a
 * machine shared with other work, req/s follows the load of the moment, while the CPU a request
 * costs does not, so the two sides of a ratio measured minutes apart stay comparable.
 */
async function load(url: string, headers: Record<string, string>, pid: number) {
  const cpuBefore = cpuSeconds(pid);
  const result = await loadUrls([url], headers, DURATION);
  const cpuUs = ((cpuSeconds(pid) - cpuBefore) / result.requests) * 1e6;
  return { rps: result.rps, p99: result.p99, cpuUs };
}

const BARE_KOA = `
import Koa from "koa";
const body = JSON.parse(process.env.BODY);
const app = new Koa();
app.use((ctx) => { ctx.body = body; });
app.listen(Number(process.env.PORT), "127.0.0.1");
`;

interface Load {
  rps: number;
  p99: number;
  cpuUs: number;
}

/**
 * `runs` rounds of GET /users on `pbxctl serve` and of the bare Koa handler serving the same
 * body, alternated: each round's ratio compares two loads taken seconds apart.
 */
async function throughput(runs: number) {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-bench-api-"));
  const port = await freePort();
  const child = startServe(dataDir, port);
  const base = `http://127.0.0.1:${port}`;
  const barePort = await freePort();
  const script = join(root, "bench/.bare-koa.mjs");
  let bare: ReturnType<typeof spawn> | undefined;
  try {
    await waitFor(`${base}/health`, child);
    const apiKey = await seedUsers(base);
    const users = await (
      await fetch(`${base}/api/v1/users`, { headers: { "x-api-key": apiKey } })
    ).text();
    writeFileSync(script, BARE_KOA);
    bare = spawn(process.execPath, [script], {
      env: { ...process.env, BODY: users, PORT: String(barePort) },
      stdio: "ignore",
    });
    await waitFor(`http://127.0.0.1:${barePort}/`, bare);
    const loadApi = () => load(`${base}/api/v1/users`, { "x-api-key": apiKey }, child.pid!);
    const loadKoa = () => load(`http://127.0.0.1:${barePort}/`, {}, bare!.pid!);
    await loadApi(); // warm-up, discarded
    await loadKoa();
    const rounds: { api: Load; koa: Load; load: string }[] = [];
    for (let run = 0; run < runs; run++) {
      const api = await loadApi();
      const koa = await loadKoa();
      rounds.push({ api, koa, load: loadAverage() });
    }
    return { rounds, bytes: users.length };
  } finally {
    if (bare) await stop(bare);
    rmSync(script, { force: true });
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// The built server (serve's bundle), with or without its metrics registry: the code `serve` runs.
const SERVER_WITH_METRICS_SWITCH = `
import { pino } from "pino";
import { loadConfig, startServer } from "${root}dist/api/serve-modules.js";
const config = loadConfig(process.env, { port: Number(process.env.PORT), dataDir: process.env.DATA_DIR });
const logger = pino({ level: "warn" });
const running = await startServer({
  config,
  logger,
  env: process.env,
  ...(process.env.METRICS === "off" ? { metrics: null } : {}),
});
process.once("SIGTERM", () => running.close().then(() => process.exit(0)));
`;

/** GET /users req/s with and without the metrics, alternating servers, median of `rounds`. */
async function metricsCost(rounds = 3) {
  const script = join(root, "bench/.api-server.mjs");
  writeFileSync(script, SERVER_WITH_METRICS_SWITCH);
  const runs: Record<"on" | "off", number[]> = { on: [], off: [] };
  const cpu: Record<"on" | "off", number[]> = { on: [], off: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const metrics of ["on", "off"] as const) {
        const dataDir = mkdtempSync(join(tmpdir(), "pbx-bench-api-"));
        const port = await freePort();
        const child = spawn(process.execPath, [script], {
          env: {
            ...process.env,
            PBX_ADMIN_PASSWORD: ADMIN_PASSWORD,
            PORT: String(port),
            DATA_DIR: dataDir,
            METRICS: metrics,
          },
          stdio: "ignore",
        });
        const base = `http://127.0.0.1:${port}`;
        try {
          await waitFor(`${base}/health`, child);
          const apiKey = await seedUsers(base);
          await load(`${base}/api/v1/users`, { "x-api-key": apiKey }, child.pid!); // warm-up
          const measured = await load(`${base}/api/v1/users`, { "x-api-key": apiKey }, child.pid!);
          runs[metrics].push(measured.rps);
          cpu[metrics].push(measured.cpuUs);
        } finally {
          await stop(child);
          rmSync(dataDir, { recursive: true, force: true });
        }
      }
    }
  } finally {
    rmSync(script, { force: true });
  }
  return {
    on: median(runs.on),
    off: median(runs.off),
    runs,
    cpuOn: median(cpu.on),
    cpuOff: median(cpu.off),
  };
}

/** CPU time the HTTP instruments add to one request (in flight + duration), in-process. */
function instrumentCostMicros(requests = 1_000_000): number {
  const { http } = createMetrics().instruments;
  const routes = ["/api/v1/users", "/api/v1/users/:id", "/api/v1/queues"];
  const started = process.cpuUsage();
  for (let i = 0; i < requests; i++) {
    const begin = process.hrtime.bigint();
    http.started();
    http.finished(routes[i % 3]!, "GET", 200, Number(process.hrtime.bigint() - begin) / 1e9);
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / requests;
}

const ms = (x: number) => x.toFixed(0);
const each = (xs: readonly number[], unit = "") => xs.map((x) => `${ms(x)}${unit}`).join(", ");

spawnSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
if (part("startup")) {
  const s = await startup(RUNS);
  console.log(`bench:api  start-up, median of ${RUNS} (runs: ${s.loads.join(", ")})`);
  console.log(
    `  pbxctl --help              ${ms(median(s.help))} ms (target < 300 ms; runs ${each(s.help)})`,
  );
  console.log(
    `  pbxctl serve -> /health    ${ms(median(s.serve))} ms (target < 1000 ms; runs ${each(s.serve)}), fresh data directory each`,
  );
  console.log(
    `    server CPU by then       ${ms(median(s.serveCpu))} ms (runs ${each(s.serveCpu)}): the figure a loaded machine stretches least`,
  );
  console.log(`  idle RSS after start       ${ms(median(s.rss))} MB (target < 150 MB)`);
}
if (part("throughput")) {
  const t = await throughput(RUNS);
  console.log(
    `bench:api  GET /users, 50 users (${t.bytes} bytes), 100 connections, ${DURATION} s each, ${RUNS} alternated runs`,
  );
  for (const [i, r] of t.rounds.entries()) {
    console.log(
      `  run ${i + 1}: API ${ms(r.api.rps)} req/s p99 ${r.api.p99} ms, bare Koa ${ms(r.koa.rps)} req/s p99 ${r.koa.p99} ms: ` +
        `${ms((r.api.rps / r.koa.rps) * 100)}%; CPU/request ${ms(r.api.cpuUs)} / ${ms(r.koa.cpuUs)} us (${r.load})`,
    );
  }
  const api = (f: (l: Load) => number) => median(t.rounds.map((r) => f(r.api)));
  const koa = (f: (l: Load) => number) => median(t.rounds.map((r) => f(r.koa)));
  console.log(
    `  pbxctl API                 ${ms(api((l) => l.rps))} req/s, p99 ${api((l) => l.p99)} ms (target p99 < 20 ms)`,
  );
  console.log(
    `  bare Koa, same body        ${ms(koa((l) => l.rps))} req/s, p99 ${koa((l) => l.p99)} ms (the floor)`,
  );
  console.log(
    `  API / bare Koa             ${ms(median(t.rounds.map((r) => (r.api.rps / r.koa.rps) * 100)))}% (median of per-run ratios; target >= 80%)`,
  );
  console.log(
    `  server CPU per request     API ${ms(api((l) => l.cpuUs))} us, bare Koa ${ms(koa((l) => l.cpuUs))} us: ` +
      `bare Koa / API ${ms(median(t.rounds.map((r) => (r.koa.cpuUs / r.api.cpuUs) * 100)))}% (the req/s ratio a CPU-bound server reaches, whatever the load)`,
  );
}
if (part("metrics")) {
  const m = await metricsCost(RUNS);
  const perRequest = instrumentCostMicros();
  console.log(
    `bench:api  metrics cost: GET /users, median of ${RUNS} alternated runs of ${DURATION} s each (${loadAverage()})`,
  );
  console.log(`  with metrics               ${ms(m.on)} req/s (runs ${each(m.runs.on)})`);
  console.log(`  without metrics            ${ms(m.off)} req/s (runs ${each(m.runs.off)})`);
  console.log(
    `  difference                 ${(((m.off - m.on) / m.off) * 100).toFixed(1)}% (target < 5%)`,
  );
  console.log(
    `  server CPU per request     ${ms(m.cpuOn)} us with, ${ms(m.cpuOff)} us without: ` +
      `${(((m.cpuOn - m.cpuOff) / m.cpuOn) * 100).toFixed(1)}% of a request's CPU is the metrics' (medians)`,
  );
  console.log(
    `  instruments per request    ${perRequest.toFixed(2)} us of CPU (in-process, 1,000,000 requests)`,
  );
}
