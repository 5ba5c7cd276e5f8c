// npm run bench:engine [-- --orgs 100,500,1000 --pjsip file,realtime --edits 20 --file-samples 3
//                         --callable-samples 20 --phones 1000 --rate 200 --storm-rate 5000 --dialplan-edits 0 --burst 0]
// (the defaults shown: the whole matrix; 21 minutes idle on 2 cores with --callable-samples 3
// --file-samples 2, well over an hour on 2 shared cores; `--orgs 20` for a quick look)
// npm run bench:engine -- --nodes-compare [--nodes-orgs 200 --nodes-edits 10]: instead of the
// matrix, issue 25's rows (bench/engine-nodes.ts): one edit's change-to-live on 2 engine nodes
// against 1, same orgs, same run.
// pbxctl against a real Asterisk 22 (PBX_ASTERISK_PREFIX, as `npm run test:engine`), as an
// operator runs it: `engine init` files, the server over a store holding N orgs of the TARGETS.md
// workload (50 users, 5 queues, 5 IVRs, 20 DIDs), PBX_ENGINE=ami, real scheduler and timers.
// For each N, in every PJSIP mode asked for, on a fresh engine: `file` (endpoints in pjsip.conf,
// res_pjsip reloads) and `realtime` (PBX_PJSIP=realtime: a throwaway PostgreSQL 15 is both the
// store and Asterisk's realtime database; a new user is rows plus a cache expiry, no reload):
//  1. the server's start-up deploy of every org;
//  2. new users created through the API, each timed from the API's answer until a phone
//     registers as it and until a call reaches it (bench/new-user-live.ts; the 800 ms debounce
//     of SPEC §8 is part of the figure where a mode waits for it). File mode at 500 orgs and
//     more reloads res_pjsip for 12-83 s per change, so it takes only --file-samples samples;
//     only the first --callable-samples wait for the call (the dialplan reload);
//  3. optionally (--dialplan-edits, --burst) IVR edits, which reload the dialplan in both modes;
//  4. --phones phones (SIPp) registering at --rate per second (bench/sipp-registrations.ts);
//  5. the engine restarted on what was deployed: its boot time (to `core waitfullybooted`) and
//     its resident memory, then the same phones registering at once (--storm-rate per second),
//     as they do after an engine restart.
// The machine's 1-minute load average is printed beside each column.

import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { pino } from "pino";
import { type RunningServer, startServer } from "../src/api/server.js";
import { loadConfig } from "../src/config.js";
import type { RealtimeTrace } from "../src/deploy/realtime-pjsip.js";
import { applyOrgState } from "../src/domain/config/apply.js";
import { commandOutput } from "../src/engine/ami-connection.js";
import { createAmiTarget } from "../src/engine/ami-target.js";
import type { EngineTarget } from "../src/engine/target.js";
import { asteriskInstallOrExit } from "../src/engine/testing/asterisk-install.js";
import { startAsterisk } from "../src/engine/testing/asterisk-instance.js";
import { SIP_REALM } from "../src/model/sip-realm.js";
import { type Db, openStore } from "../src/store/database.js";
import { startPostgresCluster } from "../src/store/testing/postgres-cluster.js";
import { benchPhones, withPhonePasswords } from "./bench-phones.js";
import { printEngineNotes, printSizeTable } from "./engine-matrix.js";
import { runNodesCompare } from "./engine-nodes.js";
import {
  measureNewUser,
  type NewUserSample,
  REALTIME_STEPS,
  type RealtimeTimeline,
} from "./new-user-live.js";
import { startSipPhone } from "./sip-phone.js";
import { registerPhones, type SippRegistrationRun } from "./sipp-registrations.js";
import { syntheticOrg } from "./synthetic-org.js";

const install = asteriskInstallOrExit();

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? String(process.argv[i + 1]) : fallback;
};
const SIZES = arg("orgs", "100,500,1000").split(",").map(Number);
const EDITS = Number(arg("edits", "20"));
// File mode from 500 orgs: each new user waits for a res_pjsip reload (11.7 s at 500 orgs, 83 s
// at 1,000 idle), so only this many samples there, said in the output.
const FILE_SAMPLES = Number(arg("file-samples", "3"));
const FILE_SAMPLES_FROM_ORGS = 500;
// How many of the samples also wait for the new user to be callable (its dialplan reload, up to
// ~95 s each at 1,000 orgs on a loaded machine); the rest are saved while the previous saves'
// dialplan deploys still run, as saves arrive in production.
const CALLABLE_SAMPLES = Number(arg("callable-samples", String(EDITS)));
// IVR edits per size (default none): each waits for a dialplan reload, ~2 s idle and up to ~95 s
// loaded at 1,000 orgs; a new user's "callable" figure already waits for one per sample.
const DIALPLAN_EDITS = Number(arg("dialplan-edits", "0"));
// A burst of edits to one IVR (default none; 100 shows the debounce folding them into one reload).
const BURST = Number(arg("burst", "0"));
const MODES = arg("pjsip", "file,realtime").split(",") as ("file" | "realtime")[];
const PHONES = Number(arg("phones", "1000"));
const RATE = Number(arg("rate", "200"));
const STORM_RATE = Number(arg("storm-rate", "5000"));
const INTERNAL_KEY = "bench-internal-key";
const POLL_MS = 10;

const delay = (t: number) => new Promise((r) => setTimeout(r, t));
// Every phase is bounded: one that runs past its bound is printed as "timed out" and the run goes
// on to the next size (or mode) instead of hanging on a saturated engine.
const PHASE_TIMEOUT_MS = Number(arg("phase-timeout-min", "30")) * 60_000;

class PhaseTimeout extends Error {}

const minutes = (ms: number) => `${Number((ms / 60_000).toFixed(1))} min`;

/** `work`, or a PhaseTimeout naming `phase` after `ms`. */
async function bounded<T>(phase: string, work: Promise<T>, ms = PHASE_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new PhaseTimeout(`${phase}: did not finish in ${minutes(ms)}`)),
      ms,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface SizeResult {
  engine: string;
  mode: "file" | "realtime";
  orgs: number;
  loadBefore: number;
  loadAfter: number;
  /** Null when its phase did not finish (said in `timedOut`). */
  startupMs: number | null;
  /** The reloads the start-up deploy sent (one of each module is the most it should take). */
  startupReloads: string[];
  bootMs: number | null;
  rssMb: number | null;
  dialplan: number[];
  newUsers: NewUserSample[];
  /** The process's event-loop delay while the new users were measured (the server runs here). */
  eventLoopDelayMs: { p50: number; p99: number; max: number } | null;
  steady: SippRegistrationRun | null;
  storm: SippRegistrationRun | null;
  burst: { reloads: string[]; lastToVisibleMs: number; firstToVisibleMs: number };
  /** Phases that ran past their bound or failed, said in the table. */
  timedOut: string[];
}

/** Resident memory of a process, from /proc (MB). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Math.round(Number(line?.replace(/\D+/g, "") ?? 0) / 1024);
}

async function measure(orgCount: number, mode: "file" | "realtime"): Promise<SizeResult | null> {
  const loadBefore = loadavg()[0]!;
  // Realtime: one throwaway cluster is the store and Asterisk's realtime database, migrated
  // before Asterisk boots (it reads ps_registrations at start).
  const cluster = mode === "realtime" ? await startPostgresCluster() : null;
  const databaseUrl = cluster
    ? `postgres://postgres:bench@127.0.0.1:${cluster.port}/postgres`
    : null;
  if (databaseUrl)
    await (await openStore({ kind: "postgres", url: databaseUrl, poolSize: 2 })).destroy();
  const engine = await startAsterisk({
    install,
    ...(databaseUrl ? { pjsipDatabaseUrl: databaseUrl } : {}),
  });
  const dataDir = await mkdtemp(join(tmpdir(), "pbxctl-bench-engine-"));
  const env: Record<string, string> = {
    PBX_ENGINE: "ami",
    PBX_AMI_PORT: String(engine.amiPort),
    PBX_AMI_USERNAME: engine.amiUsername,
    PBX_AMI_SECRET: engine.amiSecret,
    PBX_ASTERISK_DIR: engine.generatedDir,
    PBX_SOUNDS_DIR: engine.soundsDir,
    PBX_INTERNAL_KEY: INTERNAL_KEY,
    ...(databaseUrl ? { PBX_DATABASE_URL: databaseUrl, PBX_PJSIP: "realtime" } : {}),
  };
  const ami = {
    host: "127.0.0.1",
    port: engine.amiPort,
    username: engine.amiUsername,
    secret: engine.amiSecret,
  };
  // The deployer's own target, counting the reloads it sends.
  const inner = createAmiTarget(ami);
  const reloads: string[] = [];
  const target: EngineTarget = {
    ...inner,
    reload(request) {
      reloads.push(request.command.command);
      return inner.reload(request);
    },
  };
  // Realtime PJSIP's own session (as the server opens one from the environment), noting when
  // each cache expiry is sent and each verification answered: where a new user's time goes.
  const timeline: RealtimeTimeline | null = databaseUrl
    ? (Object.fromEntries(REALTIME_STEPS.map((step) => [step, []])) as unknown as RealtimeTimeline)
    : null;
  const benchOrgId = syntheticOrg(0).org.id;
  const realtimeTrace: RealtimeTrace = (step, orgIds) => {
    if (orgIds.includes(benchOrgId)) timeline?.[step].push(performance.now());
  };
  // A second session for looking and calling, so polls never queue behind a reload.
  const eye = createAmiTarget(ami);
  const cli = async (command: string) =>
    commandOutput(await eye.connection.action({ Action: "Command", Command: command })).join("\n");

  let server: RunningServer | null = null;
  let db: Db | null = null;
  // Filled as each phase is measured: a phase that runs past its bound still prints the column
  // with what was measured before it and which phase did not finish.
  const result: SizeResult = {
    engine: "Asterisk",
    mode,
    orgs: orgCount,
    loadBefore,
    loadAfter: loadBefore,
    startupMs: null,
    startupReloads: [],
    bootMs: null,
    rssMb: null,
    dialplan: [],
    newUsers: [],
    eventLoopDelayMs: null,
    steady: null,
    storm: null,
    burst: { reloads: [], lastToVisibleMs: 0, firstToVisibleMs: 0 },
    timedOut: [],
  };
  try {
    result.engine = (await cli("core show version")).split(" ").slice(0, 2).join(" ");
    const config = loadConfig(env, { dataDir, port: 0, host: "127.0.0.1" });
    db = await openStore(config.store);
    for (let i = 0; i < orgCount; i++) {
      const org = withPhonePasswords(syntheticOrg(i));
      // No outbound registrations to the documentation address: nothing leaves the machine.
      org.trunks = org.trunks.map((trunk) => ({ ...trunk, registration: false }));
      await applyOrgState(db, org, { serverKey: config.serverKey });
    }
    const started = performance.now();
    server = await startServer({
      config,
      db,
      env,
      logger: pino({ level: "silent" }),
      engineOptions: {
        target,
        ...(databaseUrl ? { realtimeTarget: createAmiTarget(ami), realtimeTrace } : {}),
      },
    });
    const running = server;
    const timedOut = result.timedOut;
    const summary = await bounded("start-up deploy", running.ready);
    if (!summary) throw new Error("no start-up deploy");
    // A unit that failed at start-up (e.g. a probe timing out behind a long dialplan reload on a
    // loaded machine) is retried by the scheduler; said here, not hidden, and the run goes on.
    for (const failed of summary.failed) {
      console.log(
        `  ${orgCount} orgs, ${mode}: start-up deploy of ${failed.unit} failed: ${failed.error}`,
      );
    }
    result.startupMs = performance.now() - started;
    result.startupReloads = [...reloads];
    const org = syntheticOrg(0);
    const prefix = org.org.context_prefix;
    const ivr = org.ivrs[0]!;
    const send = async (method: string, path: string, body: unknown) => {
      const sentAt = performance.now();
      const res = await fetch(`${running.url}/api/v1${path}?org_id=${org.org.id}`, {
        method,
        headers: { "x-internal-key": INTERNAL_KEY, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      const answeredAt = performance.now();
      return { sentAt, answeredAt, body: (await res.json()) as Record<string, unknown> };
    };
    const visible = async (command: string, shown: (output: string) => boolean) => {
      const deadline = performance.now() + 60_000;
      for (;;) {
        if (shown(await cli(command))) return performance.now();
        if (performance.now() > deadline) throw new Error(`never visible: ${command}`);
        await delay(POLL_MS);
      }
    };
    const idle = async () => {
      await running.engine!.deploys.scheduler.idle();
      // Settled, not just idle: a sample after a failed rows write would time the retry.
      await running.engine!.realtime?.settled({ withinMs: 60_000 });
    };
    const registrar = { host: "127.0.0.1", port: engine.sipPort };

    const samples =
      mode === "file" && orgCount >= FILE_SAMPLES_FROM_ORGS ? Math.min(FILE_SAMPLES, EDITS) : EDITS;
    const newUsers: NewUserSample[] = result.newUsers;
    // The server runs in this process: a step of a save waiting for the event loop (another
    // deploy compiling) is time no round trip explains.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    for (let i = 0; i < samples; i++) {
      const sample = await measureNewUser(
        {
          async createUser(extension) {
            const { sentAt, answeredAt, body } = await send("POST", "/users", {
              extension,
              name: `Bench ${extension}`,
            });
            const phone = await startSipPhone({
              user: `${prefix}${extension}`,
              password: String(body.sip_password),
              realm: SIP_REALM,
              registrar,
            });
            return { sentAt, answeredAt, phone };
          },
          async call(extension) {
            await eye.connection.action({
              Action: "Originate",
              Channel: `Local/${extension}@${prefix}internal`,
              Application: "Hangup",
              Async: "true",
              Timeout: "5000",
            });
          },
          timeline,
        },
        String(3000 + i),
        { callable: i < CALLABLE_SAMPLES },
      ).catch((error: unknown) => {
        // measureNewUser gives up after 10 minutes: said in the table, the run goes on.
        timedOut.push(`new user ${3000 + i}: ${String(error)}`);
        return null;
      });
      if (!sample) break;
      newUsers.push(sample);
      // A callable sample (and every file-mode one, whose PJSIP is that deploy) leaves the next
      // user an idle deployer: each is one change, as users see it.
      if (i < CALLABLE_SAMPLES || mode === "file") await bounded("deployer idle", idle());
    }
    loopDelay.disable();
    result.eventLoopDelayMs = {
      p50: loopDelay.percentile(50) / 1e6,
      p99: loopDelay.percentile(99) / 1e6,
      max: loopDelay.max / 1e6,
    };
    await bounded("deployer idle", idle());

    const menu = `s@${prefix}ivrm_${ivr.extension}`;
    let timeout = 20;
    const dialplan: number[] = result.dialplan;
    for (let i = 0; i < DIALPLAN_EDITS; i++) {
      timeout++;
      const { answeredAt } = await send("PUT", `/ivrs/${ivr.id}`, { timeout });
      const seen = await visible(`dialplan show ${menu}`, (o) =>
        o.includes(`WaitExten(${timeout})`),
      );
      dialplan.push(seen - answeredAt);
      await idle();
    }

    reloads.length = 0;
    let first = 0;
    let last = 0;
    for (let i = 0; i < BURST; i++) {
      timeout++;
      last = (await send("PUT", `/ivrs/${ivr.id}`, { timeout })).answeredAt;
      if (i === 0) first = last;
    }
    const seen =
      BURST > 0
        ? await visible(`dialplan show ${menu}`, (o) => o.includes(`WaitExten(${timeout})`))
        : 0;
    await idle();

    const phones = benchPhones(orgCount, PHONES);
    const bound = Math.ceil(phones.length / RATE) + 60;
    result.burst = {
      reloads: [...reloads],
      lastToVisibleMs: seen - last,
      firstToVisibleMs: seen - first,
    };
    result.steady =
      phones.length > 0
        ? await registerPhones({ phones, registrar, rate: RATE, timeoutS: bound })
        : null;

    const bootStarted = performance.now();
    await bounded("engine restart", engine.restart());
    result.bootMs = performance.now() - bootStarted;
    result.rssMb = rssMb(engine.pid);
    result.storm =
      phones.length > 0
        ? await registerPhones({ phones, registrar, rate: STORM_RATE, timeoutS: 120 })
        : null;
    result.loadAfter = loadavg()[0]!;
    // Printed before the teardown: a teardown that fails (a server whose close timed out, its
    // store connections cut when the cluster stops) cannot take the measured column with it.
    printSizeTable([result]);
    return result;
  } catch (error) {
    if (!(error instanceof PhaseTimeout)) throw error;
    // A bounded phase ran out: the column is printed as far as it got, the phase named.
    result.timedOut.push(error.message);
    if (result.startupMs === null) result.startupReloads = [...reloads];
    result.loadAfter = loadavg()[0]!;
    printSizeTable([result]);
    return result;
  } finally {
    // The server closes the deployer's target and the store; without one, close them here.
    // Bounded too: a server whose start-up deploy timed out may still wait on the engine.
    if (server) await bounded("server close", server.close(), 5 * 60_000).catch(() => {});
    else {
      await inner.close();
      await db?.destroy();
    }
    await eye.close();
    await engine.stop();
    await cluster?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

// Issue 25's rows instead of the matrix: one edit's change-to-live on 2 nodes x N/2 orgs against
// 1 node x N orgs, in the same run (bench/engine-nodes.ts).
if (process.argv.includes("--nodes-compare")) {
  await runNodesCompare({
    install,
    orgs: Number(arg("nodes-orgs", "200")),
    edits: Number(arg("nodes-edits", "10")),
  });
  process.exit(0);
}
console.log(
  `bench:engine  real Asterisk over AMI; orgs of 50 users, 5 queues, 5 IVRs, 20 DIDs; ` +
    `${EDITS} new users per size and mode (${FILE_SAMPLES} in file mode from ` +
    `${FILE_SAMPLES_FROM_ORGS} orgs, where each waits for a res_pjsip reload); ` +
    `${PHONES} phones (SIPp) at ${RATE}/s, and at ${STORM_RATE}/s right after an engine restart`,
);
const results: SizeResult[] = [];
for (const size of SIZES) {
  const columns: SizeResult[] = [];
  for (const mode of MODES) {
    const result = await measure(size, mode);
    if (!result) continue;
    // Each mode's column was printed as soon as it was measured (in measure): a long run cut
    // short keeps what it measured.
    columns.push(result);
  }
  if (columns.length > 1) printSizeTable(columns);
  results.push(...columns);
}
printEngineNotes(results, { dialplanEdits: DIALPLAN_EDITS, burst: BURST });
