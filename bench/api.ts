// npm run bench:api [-- --runs 5 --duration 10 --only startup|throughput|metrics]
//                    [--round 2 --pin --compare <other built checkout>]   (throughput)
// TARGETS.md bench:api, every figure measured in this run and repeated `--runs` times (medians
// printed, each run's figure and the load average beside them):
//  - start-up: `pbxctl --help`; `pbxctl serve` from spawn to the first 200 on /health on a fresh
//    data directory, with the server's CPU time at that moment; idle RSS;
//  - authenticated GET /users (50 users) with autocannon, 100 connections, against two floors
//    serving the same body (bench/api-floors.ts: bare Koa, TARGETS.md's floor, and raw
//    node:http), each server in its own process, in `--runs` short interleaved rounds of
//    `--round` seconds per server so each round's ratio sees one machine load; `--pin` puts the
//    servers on CPU 1 and the load generator on CPU 0; `--compare DIR` adds the serve of another
//    built checkout (before and after in one run);
//  - the cost of the metrics: the same GET /users on the server with and without its Prometheus
//    instrumentation (startServer's `metrics: null`), alternated, medians compared;
//  - beside each req/s, the server process's CPU per request (/proc/<pid>/stat), which a busy
//    shared machine does not move the way it moves req/s.
// `--only` runs one part (the start-up alone takes seconds, the others minutes).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMetrics } from "../src/metrics/registry.js";
import { startFloor } from "./api-floors.js";
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
 * Load on `url` for `seconds`; req/s, p99, and the server's (`pid`'s) CPU per request: on a
 * machine shared with other work, req/s follows the load of the moment, while the CPU a request
 * costs moves much less, so the two sides of a ratio stay comparable.
 */
async function load(url: string, headers: Record<string, string>, pid: number, seconds = DURATION) {
  const cpuBefore = cpuSeconds(pid);
  const started = performance.now();
  const result = await loadUrls([url], headers, seconds);
  const elapsed = (performance.now() - started) / 1000;
  const cpuUs = ((cpuSeconds(pid) - cpuBefore) / result.requests) * 1e6;
  return { rps: result.requests / elapsed, p99: result.p99, cpuUs };
}

interface Load {
  rps: number;
  p99: number;
  cpuUs: number;
}

/** One server the throughput part loads: its name in the table, URL, headers, process. */
interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  child: ChildProcess;
}

const ROUND_SECONDS = numberOption("round", 2);
const WARM_UP_REQUESTS = 10_000;
const PIN = process.argv.includes("--pin");
const compareAt = process.argv.indexOf("--compare");
const COMPARE = compareAt > 0 ? process.argv[compareAt + 1] : undefined;

/** Every thread of `pid` onto `cpus` (taskset's list syntax). */
function pin(pid: number, cpus: string): void {
  const done = spawnSync("taskset", ["-a", "-cp", cpus, String(pid)], { stdio: "ignore" });
  if (done.status !== 0) throw new Error(`taskset could not pin ${pid} to CPU ${cpus}`);
}

/**
 * `runs` rounds; each round loads every server for ROUND_SECONDS, in an order that reverses
 * from one round to the next (A B C, C B A, ...), so each round's ratios compare loads taken
 * seconds apart and a drift of the machine's load favours no side. The servers: `pbxctl serve`
 * (and, with `--compare DIR`, the serve of another built checkout: before and after in one run)
 * and the floors of bench/api-floors.ts serving the same body.
 */
async function throughput(runs: number) {
  const dataDirs: string[] = [];
  const targets: Target[] = [];
  const removers: (() => void)[] = [];
  try {
    const serve = async (name: string, checkout: string) => {
      const dataDir = mkdtempSync(join(tmpdir(), "pbx-bench-api-"));
      dataDirs.push(dataDir);
      const port = await freePort();
      const child = startServe(dataDir, port, {}, checkout);
      const base = `http://127.0.0.1:${port}`;
      targets.push({ name, url: `${base}/api/v1/users`, headers: {}, child });
      await waitFor(`${base}/health`, child);
      const target = targets.at(-1)!;
      target.headers = { "x-api-key": await seedUsers(base) };
      return target;
    };
    const api = await serve("API", root);
    if (COMPARE) await serve("API before", COMPARE.endsWith("/") ? COMPARE : `${COMPARE}/`);
    const users = await (await fetch(api.url, { headers: api.headers })).text();
    for (const floor of ["koa", "http"] as const) {
      const port = await freePort();
      const started = startFloor(floor, users, port);
      removers.push(started.remove);
      const url = `http://127.0.0.1:${port}/`;
      targets.push({ name: FLOOR_NAMES[floor], url, headers: {}, child: started.child });
      await waitFor(url, started.child);
    }
    if (PIN) {
      // The load generator (this process, autocannon) on one core, the servers on the other.
      pin(process.pid, "0");
      for (const target of targets) pin(target.child.pid!, "1");
    }
    // Warm-up by requests, not seconds: on a loaded machine a few seconds are too few requests for
    // the JIT, and the first rounds would measure unoptimized code.
    for (const target of targets) await loadUrls([target.url], target.headers, 0, WARM_UP_REQUESTS);
    const rounds: { loads: Map<string, Load>; load: string }[] = [];
    for (let run = 0; run < runs; run++) {
      const loads = new Map<string, Load>();
      const order = run % 2 === 0 ? targets : [...targets].reverse();
      for (const target of order) {
        loads.set(
          target.name,
          await load(target.url, target.headers, target.child.pid!, ROUND_SECONDS),
        );
      }
      rounds.push({ loads, load: loadAverage() });
    }
    return { rounds, names: targets.map((target) => target.name), bytes: users.length };
  } finally {
    for (const target of targets) await stop(target.child);
    for (const remove of removers) remove();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

const FLOOR_NAMES = { koa: "bare Koa", http: "node:http" } as const;

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
  const koa = FLOOR_NAMES.koa;
  console.log(
    `bench:api  GET /users, 50 users (${t.bytes} bytes), 100 connections: ${RUNS} rounds of ${ROUND_SECONDS} s per server, ` +
      `order reversed each round${PIN ? ", servers pinned to CPU 1 and the load generator to CPU 0" : ""}`,
  );
  for (const [i, r] of t.rounds.entries()) {
    const api = r.loads.get("API")!;
    const floor = r.loads.get(koa)!;
    const servers = t.names
      .map((name) => {
        const l = r.loads.get(name)!;
        return `${name} ${ms(l.rps)} req/s p99 ${l.p99} ms ${ms(l.cpuUs)} us`;
      })
      .join(", ");
    console.log(
      `  round ${i + 1}: ${servers}; API/Koa ${ms((api.rps / floor.rps) * 100)}% by req/s, ` +
        `${ms((floor.cpuUs / api.cpuUs) * 100)}% by CPU (${r.load})`,
    );
  }
  const of = (name: string, f: (l: Load) => number) =>
    median(t.rounds.map((r) => f(r.loads.get(name)!)));
  console.log("  medians over the rounds (req/s, p99, the server's CPU per request):");
  for (const name of t.names) {
    console.log(
      `  ${name.padEnd(26)} ${ms(of(name, (l) => l.rps))} req/s, p99 ${of(name, (l) => l.p99)} ms, ` +
        `${ms(of(name, (l) => l.cpuUs))} us CPU/request`,
    );
  }
  const ratio = (name: string, f: (api: Load, floor: Load) => number) =>
    ms(median(t.rounds.map((r) => f(r.loads.get(name)!, r.loads.get(koa)!) * 100)));
  for (const name of t.names.filter((n) => n.startsWith("API"))) {
    console.log(
      `  ${`${name} / bare Koa`.padEnd(26)} ${ratio(name, (a, f) => f.cpuUs / a.cpuUs)}% by CPU per request (the verdict; target >= 80%), ` +
        `${ratio(name, (a, f) => a.rps / f.rps)}% by req/s (medians of the per-round ratios)`,
    );
  }
  console.log(
    `  p99 target < 20 ms: API ${of("API", (l) => l.p99)} ms; the floors' own: bare Koa ${of(koa, (l) => l.p99)} ms, ` +
      `node:http ${of(FLOOR_NAMES.http, (l) => l.p99)} ms`,
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
