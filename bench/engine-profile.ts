// npm run bench:engine-profile [-- --orgs 500 --pjsip realtime --queues after-boot
//                                 --queue-load reload --overload-trigger pjsip_only
//                                 --phones 1000 --rate 200]
// The smallest harness behind bench:engine's figures at scale, without the server (docs/engine.md
// "Device state at scale"): N bench orgs compiled once (file mode: every org's pjsip.conf;
// realtime: the users' rows written by COPY into pbxctl's migrated tables, each org's pjsip.conf
// holding only identify), the engine booted on that tree, timed to `core waitfullybooted` with its
// CPU time and RSS. Then:
//  - `--queues after-boot` (as the server's start-up deploy does to an engine that booted before
//    it): the orgs' queues.conf files are empty at boot, written afterwards and loaded with one
//    `queue reload all`, and the phones register right then; `--queue-load refresh` loads them
//    with `module refresh app_queue.so` instead (app_queue loaded again: its queues are read
//    before it subscribes to device state, as at boot; what the deployer sends an engine that
//    holds no queue yet);
//  - `--queues at-boot`: the queues load with the engine, then a `dialplan reload` is timed;
//  - --phones SIPp phones register at --rate per second, while the engine's taskprocessors are
//    sampled every second: the `stasis/m:devicestate:all` subscriptions (app_queue's and the
//    core's) and the deepest queues, where an overload shows.
// `--overload-trigger global` writes Asterisk's default in place of engine init's `pjsip_only`,
// to compare the two.
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { compileAll } from "../src/compiler/index.js";
import { commandOutput } from "../src/engine/ami-connection.js";
import { createAmiTarget } from "../src/engine/ami-target.js";
import { initEngine } from "../src/engine/engine-init.js";
import { asteriskInstallOrExit } from "../src/engine/testing/asterisk-install.js";
import { startAsterisk } from "../src/engine/testing/asterisk-instance.js";
import { realtimeForm, startRealtimeDatabase, writeRows } from "../test/engine/realtime-rows.js";
import { benchPhones, withPhonePasswords } from "./bench-phones.js";
import { registerPhones } from "./sipp-registrations.js";
import { syntheticOrg } from "./synthetic-org.js";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? String(process.argv[i + 1]) : fallback;
};
const ORGS = Number(arg("orgs", "500"));
const MODE = arg("pjsip", "realtime") as "file" | "realtime";
const QUEUES = arg("queues", "after-boot") as "after-boot" | "at-boot";
const QUEUE_LOAD =
  arg("queue-load", "reload") === "refresh" ? "module refresh app_queue.so" : "queue reload all";
const TRIGGER = arg("overload-trigger", "pjsip_only");
const PHONES = Number(arg("phones", "1000"));
const RATE = Number(arg("rate", "200"));

const install = asteriskInstallOrExit();
const orgs = Array.from({ length: ORGS }, (_, i) => {
  const org = withPhonePasswords(syntheticOrg(i));
  return { ...org, trunks: org.trunks.map((t) => ({ ...t, registration: false })) };
});
const compiled = compileAll(orgs, { environment: "prod", staging_endpoint: "staging-tunnel" });
const db = MODE === "realtime" ? await startRealtimeDatabase() : null;
const form = db ? realtimeForm(orgs, compiled.files) : { files: compiled.files, rows: [] };
if (db) await writeRows(db, form.rows);
const isOrgQueues = (path: string) => /^orgs\/[^/]+\/queues\.conf$/.test(path);
const bootFiles =
  QUEUES === "after-boot"
    ? form.files.map((f) => (isOrgQueues(f.path) ? { ...f, content: "" } : f))
    : form.files;

const started = performance.now();
const engine = await startAsterisk({
  install,
  files: bootFiles,
  async init(paths) {
    const result = await initEngine({
      ...paths,
      sipBind: "127.0.0.1",
      ...(db ? { pjsip: "realtime" as const, databaseUrl: db.url } : {}),
    });
    if (TRIGGER !== "pjsip_only") {
      const pjsip = join(paths.etcDir, "pjsip.conf");
      const text = readFileSync(pjsip, "utf8");
      await writeFile(
        pjsip,
        text.replace(
          "taskprocessor_overload_trigger = pjsip_only",
          `taskprocessor_overload_trigger = ${TRIGGER}`,
        ),
      );
    }
    return result;
  },
});
const bootMs = performance.now() - started;

/** CPU seconds the engine has used so far (user + system, every thread). */
function cpuS(): number {
  const fields = readFileSync(`/proc/${engine.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const rssMb = () =>
  Math.round(
    Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${engine.pid}/status`, "utf8"))?.[1]) /
      1024,
  );

// Commands over AMI: answered when done, however long (`asterisk -rx` gives up after 60 s).
const ami = createAmiTarget({
  host: "127.0.0.1",
  port: engine.amiPort,
  username: engine.amiUsername,
  secret: engine.amiSecret,
});
// AMI answers one action at a time per session: the long reload gets a session of its own.
const reloader = createAmiTarget({
  host: "127.0.0.1",
  port: engine.amiPort,
  username: engine.amiUsername,
  secret: engine.amiSecret,
});
const command = async (text: string, session = ami) =>
  commandOutput(await session.connection.action({ Action: "Command", Command: text }, 30 * 60_000));

interface Taskprocessor {
  name: string;
  processed: number;
  queued: number;
  maxDepth: number;
}
async function taskprocessors(): Promise<Taskprocessor[]> {
  return (await command("core show taskprocessors"))
    .map((line) => line.trim().split(/\s+/))
    .filter((cells) => cells.length === 8 && /^\d+$/.test(cells[1]!))
    .map((cells) => ({
      name: cells[0]!,
      processed: Number(cells[1]),
      queued: Number(cells[2]),
      maxDepth: Number(cells[3]),
    }));
}
const describe = (all: Taskprocessor[]) => {
  const state = all
    .filter((t) => t.name.startsWith("stasis/m:devicestate:all"))
    .map((t) => `${t.processed} done/${t.queued} queued (max ${t.maxDepth})`)
    .join(", ");
  const deepest = all
    .filter((t) => t.queued > 0 && !t.name.startsWith("stasis/m:devicestate:all"))
    .sort((a, b) => b.queued - a.queued)
    .slice(0, 2)
    .map((t) => `${t.name} ${t.queued}`)
    .join(", ");
  return `device state: ${state}${deepest ? `; other queues: ${deepest}` : ""}`;
};

let queueLoad: Promise<void> = Promise.resolve();
try {
  console.log(
    `${ORGS} orgs, ${MODE} PJSIP, queues ${QUEUES}${QUEUES === "after-boot" ? ` (${QUEUE_LOAD})` : ""}, taskprocessor_overload_trigger=${TRIGGER}: ` +
      `boot ${Math.round(bootMs)} ms (engine CPU ${cpuS().toFixed(1)} s), RSS ${rssMb()} MB, ` +
      `load ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(`  after boot: ${describe(await taskprocessors())}`);
  if (QUEUES === "after-boot") {
    const dir = engine.generatedDir;
    for (const file of form.files.filter((f) => isOrgQueues(f.path))) {
      await mkdir(join(dir, file.path, ".."), { recursive: true });
      await writeFile(join(dir, file.path), file.content);
    }
    // Not awaited: the reload is answered only once app_queue's device-state work lets it
    // finish (over 10 minutes at 1,000 orgs); phones register meanwhile, as they do while a
    // server's start-up deploy runs.
    const t = performance.now();
    queueLoad = command(QUEUE_LOAD, reloader).then(
      (output) =>
        console.log(
          `  ${QUEUE_LOAD}: answered after ${Math.round(performance.now() - t)} ms: ${output.join(" ")}`,
        ),
      (error: unknown) => console.log(`  ${QUEUE_LOAD}: ${String(error)}`),
    );
    await new Promise((r) => setTimeout(r, 5000));
  } else {
    const t = performance.now();
    const cpu = cpuS();
    await command("dialplan reload");
    console.log(
      `  dialplan reload: ${Math.round(performance.now() - t)} ms, engine CPU ${(cpuS() - cpu).toFixed(1)} s`,
    );
  }

  let sampling = true;
  const t0 = performance.now();
  const sampler = (async () => {
    while (sampling) {
      const seconds = ((performance.now() - t0) / 1000).toFixed(0);
      console.log(
        `  ${seconds} s: CPU ${cpuS().toFixed(1)} s; ${describe(await taskprocessors())}`,
      );
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  const run = await registerPhones({
    phones: benchPhones(ORGS, PHONES),
    registrar: { host: "127.0.0.1", port: engine.sipPort },
    rate: RATE,
    timeoutS: Math.ceil(PHONES / RATE) + 60,
  });
  sampling = false;
  await sampler;
  const sorted = [...run.responseMs].sort((a, b) => a - b);
  const p = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  console.log(
    `  phones: ${run.registered}/${run.phones} registered at ${RATE}/s in ${Math.round(run.wallMs)} ms, ` +
      `${run.failed} failed, REGISTER exchange p50 ${p(0.5)} ms, p95 ${p(0.95)} ms; ` +
      `load ${loadavg()[0]!.toFixed(1)}`,
  );
  // The storm's whole cost: until the queue load is answered (bounded) and app_queue's
  // subscription has nothing queued.
  const loadBound = performance.now() + 5 * 60_000;
  await Promise.race([queueLoad, new Promise((r) => setTimeout(r, 5 * 60_000))]);
  for (const bound = loadBound; ; ) {
    if (performance.now() > bound) {
      console.log(`  timed out after 5 minutes: ${describe(await taskprocessors())}`);
      break;
    }
    const all = await taskprocessors();
    if (all.every((t) => !t.name.startsWith("stasis/m:devicestate:all") || t.queued === 0)) {
      const seconds = ((performance.now() - t0) / 1000).toFixed(0);
      console.log(
        `  drained ${seconds} s after the start: ${describe(all)}, CPU ${cpuS().toFixed(1)} s`,
      );
      break;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
} finally {
  await ami.close();
  await reloader.close();
  await engine.stop();
  await db?.stop();
}
