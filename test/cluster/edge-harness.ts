// Processes of the edge suite: a real Kamailio running the compiled edge, and SIPp stand-ins for
// the engine nodes. Loopback addresses only (127.0.0.10 the edge, .11/.12 the nodes), free ports,
// each process in its own temp directory and stopped by its PID (SIGKILL at the latest when the
// test process exits).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  compileEdge,
  type EdgeState,
  KAMAILIO_CFG,
  KAMAILIO_RUN_FLAGS,
} from "../../src/compiler/edge/index.js";
import { type EdgeRpc, httpEdgeRpc } from "../../src/deploy/edge-apply.js";
import { killOnExit } from "../../src/kill-on-exit.js";

export const KAMAILIO = "/usr/sbin/kamailio";
export const SIPP = "/usr/bin/sipp";
export const EDGE_ADDRESS = "127.0.0.10";

/** Why the suite cannot run here, or null. */
export function missingTools(): string | null {
  for (const [tool, args] of [
    [KAMAILIO, ["-v"]],
    [SIPP, ["-v"]],
  ] as const) {
    const run = spawnSync(tool, args, { encoding: "utf8" });
    if (run.error) return `${tool} is not installed (Debian packages kamailio and sip-tester)`;
  }
  return null;
}

/** A port free for UDP and TCP on `address`. */
export async function freePort(address: string, avoid: ReadonlySet<number> = new Set()) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(0, address, () => {
        const bound = server.address();
        server.close(() => resolve(typeof bound === "object" && bound ? bound.port : 0));
      });
    });
    if (avoid.has(port)) continue;
    const udpFree = await new Promise<boolean>((resolve) => {
      const socket = createSocket("udp4");
      socket.once("error", () => resolve(false));
      socket.bind(port, address, () => socket.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error(`no free port on ${address}`);
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(child.pid, signal);
  await Promise.race([exited, delay(5000)]);
  if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGKILL");
}

export interface RunningEdge {
  sipPort: number;
  /** Its JSON-RPC's port on 127.0.0.1 (`edge apply --rpc-port`). */
  rpcPort: number;
  rpc: EdgeRpc;
  dataDir: string;
  log: () => string;
  stop: () => Promise<void>;
}

/** Compiles `state` into a temp dir (its data_dir and ports replaced) and starts Kamailio on it. */
export async function startEdge(
  state: Omit<EdgeState, "listen">,
  probeInterval: number,
): Promise<RunningEdge> {
  const dir = mkdtempSync(join(tmpdir(), "pbx-edge-"));
  const sipPort = await freePort(EDGE_ADDRESS);
  const rpcPort = await freePort("127.0.0.1", new Set([sipPort]));
  const compiled = compileEdge({
    ...state,
    listen: {
      sip_address: EDGE_ADDRESS,
      sip_port: sipPort,
      rpc_port: rpcPort,
      data_dir: dir,
      probe_interval: probeInterval,
    },
  });
  for (const file of compiled.files) {
    mkdirSync(dirname(join(dir, file.path)), { recursive: true });
    writeFileSync(join(dir, file.path), file.content);
  }
  const edge = await startKamailio(dir, rpcPort);
  return {
    ...edge,
    sipPort,
    rpcPort,
    stop: async () => {
      await edge.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts Kamailio on the edge files already in `dir` (`pbxctl edge init --dir`, or startEdge's)
 * and resolves once its JSON-RPC on 127.0.0.1:`rpcPort` answers. `stop` leaves `dir` in place.
 */
export async function startKamailio(
  dir: string,
  rpcPort: number,
): Promise<Omit<RunningEdge, "sipPort" | "rpcPort"> & { pid: number; kill: () => Promise<void> }> {
  const logFile = join(dir, "kamailio.log");
  const child = spawn(
    KAMAILIO,
    ["-f", join(dir, KAMAILIO_CFG), ...KAMAILIO_RUN_FLAGS, "-DD", "-E", "-Y", dir, "-w", dir],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  killOnExit(child);
  const log: string[] = [];
  child.stderr?.on("data", (chunk: Buffer) => log.push(chunk.toString()));
  const rpc = httpEdgeRpc(`http://127.0.0.1:${rpcPort}/RPC`);
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`kamailio exited at start:\n${log.join("")}`);
    }
    try {
      await rpc("core.version");
      break;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await delay(100);
    }
  }
  return {
    pid: child.pid ?? -1,
    rpc,
    dataDir: dir,
    log: () => {
      writeFileSync(logFile, log.join(""));
      return readFileSync(logFile, "utf8");
    },
    stop: () => stopChild(child, "SIGTERM"),
    kill: () => stopChild(child, "SIGKILL"),
  };
}

export interface StandInNode {
  name: string;
  address: string;
  port: number;
  /** SIGKILL: the node dies as a crashed engine would, without a word to the edge. */
  kill: () => Promise<void>;
}

const SCENARIO = new URL("node-standin.xml", import.meta.url).pathname;

/** A SIPp UAS answering as engine node `name` on `address` (a free port). */
export async function startStandInNode(name: string, address: string): Promise<StandInNode> {
  const port = await freePort(address);
  const dir = mkdtempSync(join(tmpdir(), `pbx-node-${name}-`));
  const child = spawn(
    SIPP,
    ["-sf", SCENARIO, "-i", address, "-p", String(port), "-key", "node", name, "-nostdin"],
    { cwd: dir, stdio: ["ignore", "ignore", "ignore"] },
  );
  killOnExit(child);
  // SIPp binds at once; a UDP probe of the port tells when it is there.
  const deadline = Date.now() + 5000;
  while (
    await new Promise<boolean>((resolve) => {
      const socket = createSocket("udp4");
      socket.once("error", () => resolve(false));
      socket.bind(port, address, () => socket.close(() => resolve(true)));
    })
  ) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`sipp for ${name} did not start`);
    }
    await delay(50);
  }
  return {
    name,
    address,
    port,
    kill: async () => {
      await stopChild(child, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits (bounded) until the edge's probing shows `uri` inactive (I) or active (A). */
export async function waitForNodeState(
  rpc: EdgeRpc,
  uri: string,
  state: "A" | "I",
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = (await rpc("dispatcher.list")) as {
      RECORDS: Array<{ SET: { TARGETS: Array<{ DEST: { URI: string; FLAGS: string } }> } }>;
    };
    const flags = list.RECORDS.flatMap((record) => record.SET.TARGETS)
      .filter((target) => target.DEST.URI === uri)
      .map((target) => target.DEST.FLAGS);
    if (flags.length > 0 && flags.every((flag) => flag.startsWith(state))) return;
    if (Date.now() > deadline)
      throw new Error(`${uri} still ${flags.join(",")} after ${timeoutMs} ms`);
    await delay(200);
  }
}
