// npm run profile:api [-- --target api|koa|http --duration 10 --top 25 --out api.cpuprofile]
// The CPU profile behind docs/performance.md "API: GET /users": `pbxctl serve` (the built
// bundle) under `node --cpu-prof`, an org of 50 users seeded through the API, a warm-up, then
// autocannon's 100 connections on GET /users for `duration` seconds. `--target koa` or `http`
// profiles that floor (bench/api-floors.ts) serving the same body instead, for the comparison. Only the samples taken
// during that load window are summarized (start-up, seeding and warm-up are left out): the top
// frames by self time and by inclusive time, as shares of the window's CPU samples. The whole
// profile is kept at `--out` for a viewer (Chrome DevTools, speedscope).
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { SourceMap } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FloorName, startFloor } from "./api-floors.js";
import { load as loadAverage, numberOption } from "./figures.js";
import {
  ADMIN_PASSWORD,
  freePort,
  loadUrls,
  root,
  seedUsers,
  stop,
  waitFor,
} from "./serve-load.js";

const DURATION = numberOption("duration", 10);
const TOP = numberOption("top", 25);
const outAt = process.argv.indexOf("--out");
const OUT = outAt > 0 ? process.argv[outAt + 1]! : "api.cpuprofile";
const targetAt = process.argv.indexOf("--target");
const TARGET = (targetAt > 0 ? process.argv[targetAt + 1]! : "api") as "api" | FloorName;
if (!["api", "koa", "http"].includes(TARGET)) throw new Error("--target is api, koa or http");

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

// serve runs one bundle (dist/api/serve-modules.js): its frames are named by the source file and
// line its source map gives, not by the bundle's line.
const BUNDLE = "dist/api/serve-modules.js";
let bundleMap: SourceMap | undefined;
function bundleSource(line: number, column: number): string | null {
  bundleMap ??= new SourceMap(JSON.parse(readFileSync(join(root, `${BUNDLE}.map`), "utf8")));
  const entry = bundleMap.findEntry(line, column) as {
    originalSource?: string;
    originalLine?: number;
  };
  if (!entry.originalSource) return null;
  return `${entry.originalSource.replace(/^.*?(node_modules\/|src\/)/, "$1")}:${(entry.originalLine ?? 0) + 1}`;
}

/** `name file:line`, the file relative to the package or node_modules. */
function frameName({
  functionName,
  url,
  lineNumber,
  columnNumber,
}: ProfileNode["callFrame"]): string {
  const file = url.endsWith(BUNDLE)
    ? (bundleSource(lineNumber, columnNumber) ?? `${BUNDLE}:${lineNumber + 1}`)
    : url
        .replace(/^file:\/\//, "")
        .replace(/^.*node_modules\//, "")
        .replace(root, "")
        .concat(url ? `:${lineNumber + 1}` : "");
  return `${functionName || "(anonymous)"}${file ? ` ${file.replace(/^node_modules\//, "")}` : ""}`;
}

/** Which part of the stack a frame's own time belongs to, for the summary by area. */
function areaOf(frame: string): string {
  if (
    frame.startsWith("writev") ||
    frame.startsWith("writeUtf8String") ||
    frame.startsWith("writeLatin1String")
  )
    return "socket write (the syscall)";
  if (frame.startsWith("respond koa/")) return "Koa respond's own (JSON.stringify of the body)";
  if (frame.startsWith("(garbage collector)")) return "garbage collection";
  if (/ node:_?http|node:internal\/(http|streams|stream_base|net)|node:net|node:events/.test(frame))
    return "Node HTTP, streams, events";
  if (
    / (koa|koa-compose|delegates|on-finished|mime-types|statuses|type-is|content-type|http-errors|encodeurl|escape-html|vary|only|cache-content-type|ee-first|depd)\//.test(
      frame,
    )
  )
    return "Koa and its helpers";
  if (/ @koa\/router|path-to-regexp/.test(frame)) return "@koa/router";
  if (/ prom-client\//.test(frame)) return "prom-client (metrics)";
  if (/ src\/api\//.test(frame)) return "pbxctl src/api (middleware, auth, router glue)";
  if (/ src\//.test(frame)) return "pbxctl src (domain, store)";
  if (/ kysely\//.test(frame)) return "Kysely";
  if (/node:internal\/crypto|^Hash |^digest |^randomUUID/.test(frame))
    return "crypto (key digest, request id)";
  if (
    /^\((program|anonymous)\)|^runMicrotasks|node:internal\/process\/task_queues|node:internal\/timers/.test(
      frame,
    )
  )
    return "V8 and the event loop (program, microtasks, ticks)";
  return "other";
}

/**
 * Self and inclusive shares of the samples taken between `from` and `to` (µs on the monotonic
 * clock that V8's profile timestamps and process.hrtime share).
 */
function summarize(profile: Profile, from: number, to: number) {
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let at = profile.startTime;
  let counted = 0;
  for (const [i, id] of profile.samples.entries()) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < from || at > to) continue;
    const name = frameName(byId.get(id)!.callFrame);
    if (name === "(idle)") continue;
    counted++;
    self.set(name, (self.get(name) ?? 0) + 1);
    const area = areaOf(name);
    areas.set(area, (areas.get(area) ?? 0) + 1);
    const seen = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
      const frame = frameName(byId.get(node)!.callFrame);
      if (seen.has(frame)) continue;
      seen.add(frame);
      inclusive.set(frame, (inclusive.get(frame) ?? 0) + 1);
    }
  }
  const top = (counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([name, n]) => `  ${((n / counted) * 100).toFixed(1).padStart(5)}%  ${name}`);
  return { counted, areas: top(areas), self: top(self), inclusive: top(inclusive) };
}

const profileDir = mkdtempSync(join(tmpdir(), "pbx-api-profile-"));
const dataDir = mkdtempSync(join(tmpdir(), "pbx-bench-api-"));
const profiler = ["--cpu-prof", "--cpu-prof-dir", profileDir];
const children: ChildProcess[] = [];
let removeFloor = () => {};
try {
  const port = await freePort();
  const serve = spawn(
    process.execPath,
    [
      ...(TARGET === "api" ? profiler : []),
      join(root, "bin/run.js"),
      "serve",
      "--port",
      String(port),
      "--data-dir",
      dataDir,
    ],
    {
      env: { ...process.env, PBX_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: "warn" },
      stdio: "ignore",
    },
  );
  children.push(serve);
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/health`, serve);
  const apiKey = await seedUsers(base);
  let url = `${base}/api/v1/users`;
  let headers: Record<string, string> = { "x-api-key": apiKey };
  let profiled = serve;
  if (TARGET !== "api") {
    const body = await (await fetch(url, { headers })).text();
    const floorPort = await freePort();
    const floor = startFloor(TARGET, body, floorPort, profiler);
    removeFloor = floor.remove;
    children.push(floor.child);
    url = `http://127.0.0.1:${floorPort}/`;
    headers = {};
    await waitFor(url, floor.child);
    profiled = floor.child;
  }
  await loadUrls([url], headers, 3); // warm-up: the JIT's tiers
  const from = Number(process.hrtime.bigint() / 1000n);
  const measured = await loadUrls([url], headers, DURATION);
  const to = Number(process.hrtime.bigint() / 1000n);
  await stop(profiled);
  const file = readdirSync(profileDir).find((name) => name.endsWith(".cpuprofile"));
  if (!file) throw new Error("the server wrote no profile");
  copyFileSync(join(profileDir, file), OUT);
  const profile = JSON.parse(readFileSync(OUT, "utf8")) as Profile;
  const summary = summarize(profile, from, to);
  console.log(
    `profile:api  ${TARGET} GET /users body, 100 connections, ${DURATION} s: ${Math.round(measured.rps)} req/s under the profiler, ` +
      `p99 ${measured.p99} ms (${loadAverage()}); ${summary.counted} samples in the window; profile in ${OUT}`,
  );
  console.log("self time by area (share of the window's busy samples):");
  console.log(summary.areas.join("\n"));
  console.log("top frames by self time (share of the window's busy samples):");
  console.log(summary.self.join("\n"));
  console.log("top frames by inclusive time:");
  console.log(summary.inclusive.join("\n"));
} finally {
  for (const child of children) await stop(child);
  removeFloor();
  rmSync(profileDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}
