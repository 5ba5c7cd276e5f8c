// The whole platform on loopback, as an operator runs it with two nodes behind an edge: two real
// Asterisk 22 nodes (SIP on 127.0.0.11 and 127.0.0.12, AMI on 127.0.0.1, each with its own
// systemname, each loading `<PBX_NODES_DIR>/<node name>` as its generated tree), the nodes added
// with `pbxctl nodes add`, the edge written by `pbxctl edge init` and run by a real Kamailio 5.6 on
// 127.0.0.10, and the built `pbxctl serve` (npm run build first) with PBX_NODES_DIR and PBX_EDGE_*,
// deploying to the nodes and pushing to the edge. Every process is stopped by its PID.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EdgeInit from "../../src/cli/commands/edge/init.js";
import NodesAdd from "../../src/cli/commands/nodes/add.js";
import { openExistingStore } from "../../src/cli/lib/existing-store.js";
import { type EdgeStatus, edgeStatus } from "../../src/deploy/edge-sync.js";
import { initEngine } from "../../src/engine/engine-init.js";
import { asteriskInstallFromEnv } from "../../src/engine/testing/asterisk-install.js";
import {
  type AsteriskInstance,
  startAsterisk,
} from "../../src/engine/testing/asterisk-instance.js";
import { ROOT, runCommand } from "../cli/run-command.js";
import { adminToken, type ServeProcess, startServeProcess } from "../cli/serve-process.js";
import { EDGE_ADDRESS, freePort, missingTools, startKamailio } from "./edge-harness.js";

export const ADMIN_PASSWORD = "cluster-admin-password";
/** The stand-in carrier's address: the only one the edge admits carrier INVITEs from. */
export const CARRIER_ADDRESS = "127.0.0.20";
/** Seconds between the edge's OPTIONS probes of each node. */
export const PROBE_INTERVAL_S = 1;
/**
 * The edge's registration expiry (`edge init --register-expiry`): Asterisk's shortest, so that a
 * phone follows an org move within a minute (baresip re-registers at 90% of what it was granted).
 */
export const REGISTER_EXPIRY_S = 60;

/** Why the real-node suite cannot run here, or null. */
export function missingClusterTools(): string | null {
  const edge = missingTools();
  if (edge) return edge;
  if (!asteriskInstallFromEnv()) return "no Asterisk 22 (set PBX_ASTERISK_PREFIX)";
  if (spawnSync("baresip", ["-h"]).error) return "baresip is not installed (Debian baresip)";
  return null;
}

export interface ClusterNode {
  name: string;
  engine: AsteriskInstance;
  /** What the edge forwards to: `<sip address>:<port>`. */
  sipAddress: string;
}

export interface RealCluster {
  dataDir: string;
  nodes: [ClusterNode, ClusterNode];
  edge: Awaited<ReturnType<typeof startKamailio>> & { sipPort: number };
  serve: ServeProcess;
  /** Sends `/api/v1<path>` (admin token unless `headers` say otherwise); answers status and body. */
  api(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
  ): Promise<{ status: number; body: any }>;
  /** `pbxctl status`'s edge line, read from the store serve writes. */
  edgeStatus(): Promise<EdgeStatus>;
  stop(): Promise<void>;
}

async function startNode(name: string, sipBind: string, nodesDir: string): Promise<ClusterNode> {
  const install = asteriskInstallFromEnv();
  if (!install) throw new Error("no Asterisk 22 (set PBX_ASTERISK_PREFIX)");
  const engine = await startAsterisk({
    install,
    sipBind,
    systemName: name,
    // `pbxctl engine init` as docs/nodes.md asks of a node: its generated tree is the directory
    // serve writes for it, and the edge is its carrier (DID calls arrive relayed by the edge).
    init: ({ etcDir, amiPort, sipPort, amiUsername, amiSecret }) =>
      initEngine({
        etcDir,
        generatedDir: join(nodesDir, name),
        amiUsername,
        amiSecret,
        amiPort,
        sipBind,
        sipPort,
        carriers: [EDGE_ADDRESS],
      }),
  });
  return { name, engine, sipAddress: `${sipBind}:${engine.sipPort}` };
}

async function cli(command: Parameters<typeof runCommand>[0], argv: string[]): Promise<void> {
  const run = await runCommand(command, argv);
  if (run.code !== 0) {
    throw new Error(`${argv.join(" ")}: exit ${run.code}\n${run.stderr}${run.error ?? ""}`);
  }
}

/** Boots the nodes, writes and starts the edge, then starts serve over the same store. */
export async function startRealCluster(): Promise<RealCluster> {
  const dataDir = mkdtempSync(join(tmpdir(), "pbx-cluster-"));
  const nodesDir = join(dataDir, "nodes");
  const edgeDir = join(dataDir, "edge");
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const nodes = (await Promise.all([
      startNode("node-1", "127.0.0.11", nodesDir),
      startNode("node-2", "127.0.0.12", nodesDir),
    ])) as [ClusterNode, ClusterNode];
    for (const node of nodes) stops.push(() => node.engine.stop());

    // The store first (nodes add opens an existing one), then the nodes as an operator adds them.
    const migrate = spawnSync(
      process.execPath,
      [join(ROOT, "bin/run.js"), "db", "migrate", "--data-dir", dataDir],
      { encoding: "utf8" },
    );
    if (migrate.status !== 0) throw new Error(`db migrate: ${migrate.stderr}`);
    for (const node of nodes) {
      const secretFile = join(dataDir, `${node.name}.secret`);
      writeFileSync(secretFile, node.engine.amiSecret);
      await cli(NodesAdd, [
        node.name,
        "--ami-host",
        "127.0.0.1",
        "--ami-port",
        String(node.engine.amiPort),
        "--ami-user",
        node.engine.amiUsername,
        "--ami-secret-file",
        secretFile,
        "--sip-address",
        node.sipAddress,
        "--capacity",
        "10",
        "--data-dir",
        dataDir,
      ]);
    }

    const sipPort = await freePort(EDGE_ADDRESS);
    const rpcPort = await freePort("127.0.0.1", new Set([sipPort]));
    await cli(EdgeInit, [
      "--dir",
      edgeDir,
      "--sip-address",
      EDGE_ADDRESS,
      "--sip-port",
      String(sipPort),
      "--rpc-port",
      String(rpcPort),
      "--carrier",
      CARRIER_ADDRESS,
      "--probe-interval",
      String(PROBE_INTERVAL_S),
      "--register-expiry",
      String(REGISTER_EXPIRY_S),
      "--data-dir",
      dataDir,
    ]);
    const kamailio = await startKamailio(edgeDir, rpcPort);
    stops.push(() => kamailio.stop());
    const edge = { ...kamailio, sipPort };

    const serve = await startServeProcess(dataDir, {
      PBX_ENGINE: "none",
      PBX_ADMIN_PASSWORD: ADMIN_PASSWORD,
      PBX_NODES_DIR: nodesDir,
      PBX_EDGE_DIR: edgeDir,
      PBX_EDGE_RPC_PORT: String(rpcPort),
      PBX_EDGE_CARRIERS: CARRIER_ADDRESS,
    });
    // Killed by PID if the test process ends first (a failed suite, an uncaught error).
    const killServe = () =>
      serve.child.pid && serve.child.exitCode === null && serve.child.kill("SIGKILL");
    process.on("exit", killServe);
    stops.push(async () => {
      process.off("exit", killServe);
      if (serve.child.exitCode === null && serve.child.pid) {
        process.kill(serve.child.pid, "SIGTERM");
        await Promise.race([serve.exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (serve.child.exitCode === null) process.kill(serve.child.pid, "SIGKILL");
      }
    });
    const token = await adminToken(serve.url, ADMIN_PASSWORD);
    const api: RealCluster["api"] = async (method, path, body, headers) => {
      const response = await fetch(`${serve.url}/api/v1${path}`, {
        method,
        headers: {
          ...(headers ?? { authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    };
    const settings = { dir: edgeDir, rpcPort, carriers: [CARRIER_ADDRESS] };
    const readEdgeStatus = async () => {
      const store = await openExistingStore(dataDir);
      try {
        return await edgeStatus(store.db, settings);
      } finally {
        await store.db.destroy();
      }
    };
    return { dataDir, nodes, edge, serve, api, edgeStatus: readEdgeStatus, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
