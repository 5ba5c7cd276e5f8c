// One real Asterisk for a test or a bench: its own temp dir and asterisk.conf naming every
// directory, the top-level files of `pbxctl engine init`, AMI and SIP on free loopback ports
// (never 5038/5060), a trace log, and a stop that always ends the process by its PID.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer as createTcpServer } from "node:net";
import { join } from "node:path";
import type { CompiledFile } from "../../compiler/types.js";
import { killOnExit } from "../../kill-on-exit.js";
import { initEngine } from "../engine-init.js";
import type { AsteriskInstall } from "./asterisk-install.js";

export interface AsteriskInstanceOptions {
  install: AsteriskInstall;
  /** Generated files (paths relative to the generated tree) written before the engine boots. */
  files?: readonly CompiledFile[];
  /** Sound files written before boot, by path under the sounds dir (`moh/<org id>/x.wav`). */
  sounds?: Readonly<Record<string, Uint8Array>>;
  /** Extra files for the config directory (e.g. a test-only `extensions_test.conf`). */
  etcFiles?: Readonly<Record<string, string>>;
  /** Lines appended to the top-level extensions.conf (e.g. `#include "extensions_test.conf"`). */
  extensionsAppend?: string;
  amiUsername?: string;
  amiSecret?: string;
  /**
   * Writes the top-level files in place of `initEngine` (e.g. the `pbxctl engine init` command a
   * guide gives, run as a user would); asterisk.conf is already in `etcDir`. Answers the
   * generated tree it set up.
   */
  init?: (engine: {
    etcDir: string;
    amiPort: number;
    sipPort: number;
    amiUsername: string;
    amiSecret: string;
  }) => Promise<{ generatedDir: string }>;
  /** Realtime PJSIP from this database (`engine init --pjsip realtime --database-url`). */
  pjsipDatabaseUrl?: string;
  /** With `pjsipDatabaseUrl`: the engine node whose views it reads (`engine init --node`). */
  pjsipNode?: string;
  /**
   * The loopback address SIP binds to (default 127.0.0.1): several engines on one machine each
   * take their own (127.0.0.11, 127.0.0.12) as the nodes of a cluster do. AMI stays on 127.0.0.1.
   */
  sipBind?: string;
  /**
   * `systemname` in asterisk.conf: every node of a cluster needs its own, or two nodes' call ids
   * (`<systemname>-<epoch>.<n>`) collide and the second node's records are taken for duplicates.
   */
  systemName?: string;
}

export interface AsteriskInstance {
  readonly dir: string;
  readonly etcDir: string;
  /** pbxctl's generated tree (`<etc>/pbxctl`): what PBX_ASTERISK_DIR names for a deployer. */
  readonly generatedDir: string;
  /** `<astdatadir>/sounds`: greetings go in `greetings/`. */
  readonly soundsDir: string;
  /** `<astspooldir>/monitor`, where MixMonitor writes relative names: PBX_RECORDINGS_DIR. */
  readonly recordingsDir: string;
  /** The engine's PID (a new one after `restart`). */
  readonly pid: number;
  readonly amiPort: number;
  readonly sipPort: number;
  /** The address SIP listens on (`sipBind`, or 127.0.0.1). */
  readonly sipAddress: string;
  readonly amiUsername: string;
  readonly amiSecret: string;
  /** Runs one CLI command (`asterisk -rx`) and resolves with its output. */
  cli(command: string): Promise<string>;
  /** The full log so far (`<dir>/log/full`: notice, warning, error, verbose, dtmf). */
  log(): string;
  /** WARNING and ERROR lines logged so far (from `since`, a length of `log()`). */
  problems(since?: number): string[];
  /** Waits until `log()` (from `since`) matches, or throws after `timeoutMs`. */
  waitForLog(pattern: RegExp, options?: { since?: number; timeoutMs?: number }): Promise<string>;
  /** Stops the engine (graceful, then SIGKILL by PID) and starts it again on the same files. */
  restart(): Promise<void>;
  /** Stops the engine (graceful, then SIGKILL by PID) and removes its directory. */
  stop(): Promise<void>;
}

/** A TCP port free on `address` (127.0.0.1 unless given) whose UDP twin is free too (SIP listens on both). */
export async function freeLoopbackPort(
  avoid: ReadonlySet<number> = new Set(),
  address = "127.0.0.1",
): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createTcpServer();
      server.once("error", reject);
      server.listen(0, address, () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    if (port === 5038 || port === 5060 || avoid.has(port)) continue;
    const udpFree = await new Promise<boolean>((resolve) => {
      const socket = createSocket("udp4");
      socket.once("error", () => resolve(false));
      socket.bind(port, address, () => socket.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error("no free loopback port pair found");
}

function runCli(binary: string, config: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      binary,
      ["-C", config, "-rx", command],
      // SIGKILL, not the default SIGTERM: `asterisk -rx` quits cleanly on SIGTERM (exit 0, the
      // output so far), so a command cut off by the timeout looked like one that had answered.
      { timeout: 30_000, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`asterisk -rx '${command}': ${error.message} ${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** Bound on one boot: 1,000 bench orgs in file mode take minutes on 2 shared cores. */
const BOOT_TIMEOUT_MS = 30 * 60_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Links the install's data dir entries into `dataDir`, with a writable `sounds/greetings`. */
async function prepareDataDir(install: AsteriskInstall, dataDir: string): Promise<string> {
  await mkdir(join(dataDir, "sounds", "greetings"), { recursive: true });
  for (const entry of readdirSync(install.dataDir)) {
    if (entry === "sounds") continue;
    await symlink(join(install.dataDir, entry), join(dataDir, entry));
  }
  const sounds = join(install.dataDir, "sounds");
  if (existsSync(sounds)) {
    for (const entry of readdirSync(sounds)) {
      if (entry === "greetings") continue;
      await symlink(join(sounds, entry), join(dataDir, "sounds", entry));
    }
  }
  return join(dataDir, "sounds");
}

/** Boots an Asterisk on loopback ports and resolves once it is fully booted. */
export async function startAsterisk(options: AsteriskInstanceOptions): Promise<AsteriskInstance> {
  const { install } = options;
  // Short: the control socket path must stay under 108 characters.
  const dir = await mkdtemp("/tmp/pbxa-");
  const etcDir = join(dir, "etc");
  for (const sub of ["etc", "db", "cache", "spool", "run", "log/cdr-csv", "log/cdr-custom"]) {
    await mkdir(join(dir, sub), { recursive: true });
  }
  const soundsDir = await prepareDataDir(install, join(dir, "data"));
  const amiPort = await freeLoopbackPort();
  const sipAddress = options.sipBind ?? "127.0.0.1";
  const sipPort = await freeLoopbackPort(new Set([amiPort]), sipAddress);
  const amiUsername = options.amiUsername ?? "pbxctl";
  const amiSecret = options.amiSecret ?? "pbxctl-test-secret";
  // First: engine init reads the directories Asterisk uses from it.
  const config = join(etcDir, "asterisk.conf");
  await writeFile(
    config,
    [
      "[directories]",
      `astetcdir => ${etcDir}`,
      `astmoddir => ${install.modulesDir}`,
      `astvarlibdir => ${join(dir, "data")}`,
      `astdatadir => ${join(dir, "data")}`,
      `astagidir => ${join(dir, "data", "agi-bin")}`,
      `astkeydir => ${join(dir, "data")}`,
      `astsbindir => ${join(install.binary, "..")}`,
      `astdbdir => ${join(dir, "db")}`,
      `astcachedir => ${join(dir, "cache")}`,
      `astspooldir => ${join(dir, "spool")}`,
      `astrundir => ${join(dir, "run")}`,
      `astlogdir => ${join(dir, "log")}`,
      "[options]",
      "verbose = 3",
      ...(options.systemName ? [`systemname = ${options.systemName}`] : []),
      "",
    ].join("\n"),
  );
  const init = options.init
    ? await options.init({ etcDir, amiPort, sipPort, amiUsername, amiSecret })
    : await initEngine({
        etcDir,
        amiUsername,
        amiSecret,
        amiPort,
        sipBind: sipAddress,
        sipPort,
        ...(options.pjsipDatabaseUrl
          ? {
              pjsip: "realtime" as const,
              databaseUrl: options.pjsipDatabaseUrl,
              ...(options.pjsipNode ? { node: options.pjsipNode } : {}),
            }
          : {}),
      });
  for (const file of options.files ?? []) {
    const path = join(init.generatedDir, file.path);
    await mkdir(join(path, ".."), { recursive: true });
    await writeFile(path, file.content);
  }
  // Before boot: a music-on-hold class is scanned when its module loads.
  for (const [name, bytes] of Object.entries(options.sounds ?? {})) {
    const path = join(soundsDir, name);
    await mkdir(join(path, ".."), { recursive: true });
    await writeFile(path, bytes);
  }
  for (const [name, content] of Object.entries(options.etcFiles ?? {})) {
    await writeFile(join(etcDir, name), content);
  }
  if (options.extensionsAppend) {
    const top = join(etcDir, "extensions.conf");
    await writeFile(top, `${readFileSync(top, "utf8")}${options.extensionsAppend}\n`);
  }
  await writeFile(
    join(etcDir, "logger.conf"),
    "[general]\n[logfiles]\nfull => notice,warning,error,verbose,dtmf\n",
  );

  const output = openSync(join(dir, "console.log"), "a");
  let child: ChildProcess;
  let exited = false;
  const launch = () => {
    const started = spawn(install.binary, ["-C", config, "-f", "-n", "-g"], {
      stdio: ["ignore", output, output],
    });
    killOnExit(started);
    exited = false;
    started.once("exit", () => {
      if (child === started) exited = true;
    });
    child = started;
  };
  launch();
  const logFile = join(dir, "log", "full");
  const readLog = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");
  const socket = join(dir, "run", "asterisk.ctl");

  const halt = async () => {
    if (!exited) {
      await runCli(install.binary, config, "core stop now").catch(() => {});
      for (let i = 0; i < 100 && !exited; i++) await delay(50);
      if (!exited) child.kill("SIGKILL");
      for (let i = 0; i < 100 && !exited; i++) await delay(20);
    }
  };
  const stop = async () => {
    await halt();
    await rm(dir, { recursive: true, force: true });
  };
  const booted = async () => {
    for (let i = 0; !existsSync(socket); i++) {
      if (exited)
        throw new Error(
          `asterisk exited at start: ${readFileSync(join(dir, "console.log"), "utf8")}`,
        );
      if (i > 300) throw new Error("asterisk did not create its control socket in 30 s");
      await delay(100);
    }
    // One `core waitfullybooted` is cut off by runCli's 30 s bound, and a boot over 1,000 orgs
    // takes longer: ask again until the engine says it has booted (or BOOT_TIMEOUT_MS passed).
    const deadline = Date.now() + BOOT_TIMEOUT_MS;
    for (;;) {
      if (exited) throw new Error("asterisk exited while booting");
      const answer = await runCli(install.binary, config, "core waitfullybooted").catch(() => "");
      if (/fully booted/i.test(answer)) return;
      if (Date.now() > deadline)
        throw new Error(`asterisk did not finish booting in ${BOOT_TIMEOUT_MS / 60_000} minutes`);
    }
  };

  try {
    await booted();
  } catch (error) {
    await stop();
    throw error;
  }

  const instance: AsteriskInstance = {
    dir,
    etcDir,
    generatedDir: init.generatedDir,
    soundsDir,
    recordingsDir: join(dir, "spool", "monitor"),
    get pid() {
      return child.pid ?? -1;
    },
    amiPort,
    sipPort,
    sipAddress,
    amiUsername,
    amiSecret,
    cli: (command) => runCli(install.binary, config, command),
    log: readLog,
    problems: (since = 0) =>
      readLog()
        .slice(since)
        .split("\n")
        .filter((line) => /\b(WARNING|ERROR)\[\d+\]/.test(line)),
    async waitForLog(pattern, { since = 0, timeoutMs = 15_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = readLog().slice(since);
        if (pattern.test(text)) return text;
        if (Date.now() > deadline) {
          throw new Error(
            `timed out waiting for ${pattern} in the Asterisk log:\n${text.slice(-3000)}`,
          );
        }
        await delay(50);
      }
    },
    async restart() {
      await halt();
      await rm(socket, { force: true });
      launch();
      await booted();
    },
    stop,
  };
  return instance;
}
