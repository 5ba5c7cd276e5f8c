// npm run profile:ingest [-- --orgs 1000 --records 200000 --ingest 20000 --out ingest.cpuprofile]
// The CPU profile behind docs/performance.md "Where the ingest's time goes": a store of `records`
// call records (bench/call-load.ts), then a burst of `ingest` Cdr events through call tracking,
// profiled alone (the inspector's profiler runs from the first event fed to the last stored, so
// the bulk load is not in it). Prints the burst's events/s and CPU time, the self time by kind
// (SQLite's native calls, Kysely, garbage collection, pbxctl) and the top frames, and writes the
// profile for a viewer (Chrome DevTools, speedscope).
import { writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import { startCallTracking } from "../src/api/call-tracking.js";
import { openStore } from "../src/store/database.js";
import { bulkLoad, cdr, round } from "./call-load.js";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const ORGS = Number(arg("orgs", "1000"));
const RECORDS = Number(arg("records", "200000"));
const INGEST = Number(arg("ingest", "20000"));
const OUT = arg("out", "ingest.cpuprofile");

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The kind of work a frame is, for the summary. */
function kindOf(frame: ProfileNode["callFrame"]): string {
  if (frame.url === "" && ["run", "all", "get", "iterate"].includes(frame.functionName)) {
    return "SQLite (better-sqlite3's native statement calls)";
  }
  if (frame.url.includes("node_modules/kysely")) return "Kysely (building and compiling queries)";
  if (frame.functionName === "(garbage collector)") return "garbage collection";
  if (frame.url.includes("/src/")) return "pbxctl";
  return "other";
}

function summarize(profile: Profile): void {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfTime = new Map<number, number>();
  let total = 0;
  for (const [i, id] of profile.samples.entries()) {
    const delta = profile.timeDeltas[i] ?? 0;
    total += delta;
    selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  }
  const byKind = new Map<string, number>();
  const byFrame = new Map<string, number>();
  for (const [id, time] of selfTime) {
    const frame = nodes.get(id)!.callFrame;
    byKind.set(kindOf(frame), (byKind.get(kindOf(frame)) ?? 0) + time);
    const where = frame.url.replace(/.*node_modules\//, "").replace(/.*\/(src|bench)\//, "$1/");
    const name = `${frame.functionName || "(anonymous)"} ${where}${where ? `:${frame.lineNumber + 1}` : ""}`;
    byFrame.set(name, (byFrame.get(name) ?? 0) + time);
  }
  const share = (time: number) => `${((100 * time) / total).toFixed(1).padStart(5)}%`;
  console.log("self time by kind:");
  for (const [kind, time] of [...byKind].sort((a, b) => b[1] - a[1])) {
    console.log(`  ${share(time)}  ${kind}`);
  }
  console.log("top frames:");
  for (const [name, time] of [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
    console.log(`  ${share(time)}  ${name}`);
  }
}

const dir = await mkdtemp(join(tmpdir(), "pbx-ingest-profile-"));
try {
  const file = join(dir, "pbx.db");
  await (await openStore(file)).destroy();
  bulkLoad(file, ORGS, RECORDS);
  const db = await openStore(file);
  const ingest = startCallTracking({
    db,
    clock: () => new Date(),
    logger: pino({ level: "warn" }),
  });
  await ingest.idle();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < INGEST; i++) ingest.feed(cdr(i, ORGS));
  await ingest.idle();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  writeFileSync(OUT, JSON.stringify(profile));
  console.log(
    `burst of ${INGEST} Cdr events into ${RECORDS} records: ${Math.round(INGEST / seconds)} events/s; CPU user ${round(used.user / 1e6)} s, system ${round(used.system / 1e6)} s; profile in ${OUT}`,
  );
  summarize(profile as unknown as Profile);
  await ingest.stop();
  await db.destroy();
} finally {
  await rm(dir, { recursive: true, force: true });
}
