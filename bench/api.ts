// npm run bench:api [-- --duration 10 --metrics-rounds 3]
// TARGETS.md bench:api, every figure measured in this run:
//  - start-up: `pbxctl --help`; `pbxctl serve` from spawn to the first 200 on /health; idle RSS;
//  - authenticated GET /users (50 users) with autocannon, 100 connections, against a bare Koa
//    JSON handler serving the same body, each server in its own process;
//  - the cost of the metrics: the same GET /users on the server with and without its Prometheus
//    instrumentation (startServer's `metrics: null`), alternated three times, medians compared;
//  - beside each req/s, the server process's CPU per request (/proc/<pid>/stat), which a busy
//    shared machine does not move the way it moves req/s.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMetrics } from "../src/metrics/registry.js";
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

const argDuration = process.argv.indexOf("--duration");
const DURATION = argDuration > 0 ? Number(process.argv[argDuration + 1]) : 10;
const argRounds = process.argv.indexOf("--metrics-rounds");
/** Alternated with/without rounds of the metrics cost; more rounds steady a loaded machine. */
const METRICS_ROUNDS = argRounds > 0 ? Number(process.argv[argRounds + 1]) : 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function startup(): Promise<{ help: number; serve: number; rss: number }> {
  const help: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    spawnSync(process.execPath, [join(root, "bin/run.js"), "--help"], { stdio: "ignore" });
    help.push(performance.now() - start);
  }
  const serve: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < 5; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), "pbx-bench-api-"));
    const port = await freePort();
    const start = performance.now();
    const child = startServe(dataDir, port);
    await waitFor(`http://127.0.0.1:${port}/health`, child);
    serve.push(performance.now() - start);
    await new Promise((r) => setTimeout(r, 1000)); // idle
    rss.push(rssMb(child.pid!));
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { help: median(help), serve: median(serve), rss: median(rss) };
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

async function throughput() {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-bench-api-"));
  const port = await freePort();
  const child = startServe(dataDir, port);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${base}/health`, child);
    const apiKey = await seedUsers(base);
    const users = await (
      await fetch(`${base}/api/v1/users`, { headers: { "x-api-key": apiKey } })
    ).text();
    await load(`${base}/api/v1/users`, { "x-api-key": apiKey }, child.pid!); // warm-up, discarded
    const api = await load(`${base}/api/v1/users`, { "x-api-key": apiKey }, child.pid!);

    const barePort = await freePort();
    const script = join(root, "bench/.bare-koa.mjs");
    writeFileSync(script, BARE_KOA);
    const bare = spawn(process.execPath, [script], {
      env: { ...process.env, BODY: users, PORT: String(barePort) },
      stdio: "ignore",
    });
    try {
      await waitFor(`http://127.0.0.1:${barePort}/`, bare);
      await load(`http://127.0.0.1:${barePort}/`, {}, bare.pid!);
      const koa = await load(`http://127.0.0.1:${barePort}/`, {}, bare.pid!);
      return { api, koa, bytes: users.length };
    } finally {
      await stop(bare);
      rmSync(script, { force: true });
    }
  } finally {
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// The built server, with or without its metrics registry: the same code path as `serve`.
const SERVER_WITH_METRICS_SWITCH = `
import { pino } from "pino";
import { startServer } from "${root}dist/api/server.js";
import { loadConfig } from "${root}dist/config.js";
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

spawnSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
const s = await startup();
console.log("bench:api  start-up (median of 5)");
console.log(`  pbxctl --help              ${s.help.toFixed(0)} ms (target < 300 ms)`);
console.log(`  pbxctl serve -> /health    ${s.serve.toFixed(0)} ms (target < 1000 ms)`);
console.log(`  idle RSS after start       ${s.rss.toFixed(0)} MB (target < 150 MB)`);
const t = await throughput();
console.log(
  `bench:api  GET /users, 50 users (${t.bytes} bytes), 100 connections, ${DURATION} s each`,
);
console.log(
  `  pbxctl API                 ${t.api.rps.toFixed(0)} req/s, p99 ${t.api.p99} ms (target p99 < 20 ms)`,
);
console.log(`  bare Koa, same body        ${t.koa.rps.toFixed(0)} req/s, p99 ${t.koa.p99} ms`);
console.log(
  `  API / bare Koa             ${((t.api.rps / t.koa.rps) * 100).toFixed(0)}% (target >= 80%)`,
);
console.log(
  `  server CPU per request     API ${t.api.cpuUs.toFixed(0)} us, bare Koa ${t.koa.cpuUs.toFixed(0)} us: ` +
    `bare Koa / API ${((t.koa.cpuUs / t.api.cpuUs) * 100).toFixed(0)}% (the req/s ratio a CPU-bound server reaches, whatever the load)`,
);
const m = await metricsCost(METRICS_ROUNDS);
const perRequest = instrumentCostMicros();
console.log(
  `bench:api  metrics cost: GET /users, median of ${METRICS_ROUNDS} alternated runs of ${DURATION} s each`,
);
console.log(
  `  with metrics               ${m.on.toFixed(0)} req/s (runs ${m.runs.on.map((r) => r.toFixed(0)).join(", ")})`,
);
console.log(
  `  without metrics            ${m.off.toFixed(0)} req/s (runs ${m.runs.off.map((r) => r.toFixed(0)).join(", ")})`,
);
console.log(
  `  difference                 ${(((m.off - m.on) / m.off) * 100).toFixed(1)}% (target < 5%)`,
);
console.log(
  `  server CPU per request     ${m.cpuOn.toFixed(0)} us with, ${m.cpuOff.toFixed(0)} us without: ` +
    `${(((m.cpuOn - m.cpuOff) / m.cpuOn) * 100).toFixed(1)}% of a request's CPU is the metrics' (medians)`,
);
console.log(
  `  instruments per request    ${perRequest.toFixed(2)} us of CPU (in-process, 1,000,000 requests)`,
);
