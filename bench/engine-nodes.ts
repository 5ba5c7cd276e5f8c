// npm run bench:engine -- --nodes-compare [--nodes-orgs 200 --nodes-edits 10]
// Issue 25's rows: what placing orgs on several engine nodes buys one edit. In the same run, the
// same store content (--nodes-orgs orgs of the TARGETS.md workload: 50 users, 5 queues, 5 IVRs,
// 20 DIDs) is served by 2 engine nodes (half the orgs each, placed least-loaded) and by 1 node
// (every org), each node a real Asterisk 22 (SIP on 127.0.0.1N, systemname node-N), the real
// `serve` deploying to it as an engine node. Per layout: the start-up deploy of every node, then
// --nodes-edits edits of one IVR of an org on node-1, each timed from the API's answer until the
// node's dialplan shows it (the 800 ms debounce of SPEC §8 included, as users see it): its p50
// and p95. An edit reloads only the node that holds the org, whose dialplan is half as big with
// two nodes. With two nodes it then times an `org move` of that org to node-2 (no call up).
import { mkdirSync, symlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import { type RunningServer, startServer } from "../src/api/server.js";
import { systemClock } from "../src/clock.js";
import { loadConfig } from "../src/config.js";
import { nodeSoundsDir } from "../src/deploy/node-dirs.js";
import { applyOrgState } from "../src/domain/config/apply.js";
import { createEngineNode, listEngineNodes } from "../src/domain/nodes/engine-nodes.js";
import { commandOutput } from "../src/engine/ami-connection.js";
import { type AmiTarget, createAmiTarget } from "../src/engine/ami-target.js";
import type { AsteriskInstall } from "../src/engine/testing/asterisk-install.js";
import { type AsteriskInstance, startAsterisk } from "../src/engine/testing/asterisk-instance.js";
import { type Db, openStore } from "../src/store/database.js";
import { withPhonePasswords } from "./bench-phones.js";
import { syntheticOrg } from "./synthetic-org.js";

const INTERNAL_KEY = "bench-internal-key";
const ADMIN_PASSWORD = "bench-admin-password";
const POLL_MS = 10;
/** Bound on one edit becoming visible (a dialplan reload of 200 orgs on a loaded machine). */
const VISIBLE_TIMEOUT_MS = 5 * 60_000;

export interface NodesCompareOptions {
  install: AsteriskInstall;
  /** Orgs in the store, spread over the nodes of each layout. */
  orgs: number;
  /** Edits of one IVR per layout. */
  edits: number;
}

export interface LayoutResult {
  nodes: number;
  orgsPerNode: number[];
  loadBefore: number;
  loadAfter: number;
  startupMs: number;
  /** Answer-to-visible of each edit (ms). */
  editMs: number[];
  /**
   * With 2 nodes: `org move` of the edited org from node-1 to node-2 (no call up), from the API's
   * 202 until the move is `done` (deployed and verified on node-2, switched, removed from node-1).
   */
  moveMs: number | null;
  /** Reload commands sent to each node during the edits. */
  reloadsPerNode: number[];
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const percentile = (xs: readonly number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const ms = (x: number) =>
  x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x).toLocaleString("en")} ms`;

async function cliOf(session: AmiTarget, command: string): Promise<string> {
  return commandOutput(
    await session.connection.action({ Action: "Command", Command: command }),
  ).join("\n");
}

/** One layout: `nodeCount` real engines as engine nodes, `orgCount` orgs placed over them. */
export async function measureLayout(
  options: NodesCompareOptions,
  nodeCount: number,
): Promise<LayoutResult> {
  const loadBefore = loadavg()[0]!;
  const dataDir = await mkdtemp(join(tmpdir(), "pbxctl-bench-nodes-"));
  const nodesDir = join(dataDir, "nodes");
  mkdirSync(nodesDir);
  const engines: AsteriskInstance[] = [];
  const eyes: AmiTarget[] = [];
  let server: RunningServer | null = null;
  let db: Db | null = null;
  /** Reload commands sent to each node, by node name. */
  const reloads = new Map<string, string[]>();
  try {
    for (let n = 1; n <= nodeCount; n++) {
      const engine = await startAsterisk({
        install: options.install,
        sipBind: `127.0.0.1${n}`,
        systemName: `node-${n}`,
      });
      engines.push(engine);
      // The node's tree and sounds as the service sees them (a mount on real machines).
      symlinkSync(engine.generatedDir, join(nodesDir, `node-${n}`));
      symlinkSync(engine.soundsDir, nodeSoundsDir(nodesDir, `node-${n}`));
      // A second session per node for looking, so polls never queue behind a reload.
      eyes.push(
        createAmiTarget({
          host: "127.0.0.1",
          port: engine.amiPort,
          username: engine.amiUsername,
          secret: engine.amiSecret,
        }),
      );
    }
    const config = loadConfig(
      { PBX_INTERNAL_KEY: INTERNAL_KEY, PBX_ADMIN_PASSWORD: ADMIN_PASSWORD },
      { dataDir, port: 0, host: "127.0.0.1" },
    );
    db = await openStore(config.store);
    // Nodes first, so each org is placed as it is created (least loaded: they alternate).
    for (const [i, engine] of engines.entries()) {
      await createEngineNode(
        { db, clock: systemClock, config: { serverKey: config.serverKey } },
        {
          name: `node-${i + 1}`,
          ami_host: "127.0.0.1",
          ami_port: engine.amiPort,
          ami_username: engine.amiUsername,
          ami_secret: engine.amiSecret,
          sip_address: `${engine.sipAddress}:${engine.sipPort}`,
          capacity: options.orgs,
        },
      );
    }
    for (let i = 0; i < options.orgs; i++) {
      const org = withPhonePasswords(syntheticOrg(i));
      // No outbound registrations to the documentation address: nothing leaves the machine.
      org.trunks = org.trunks.map((trunk) => ({ ...trunk, registration: false }));
      await applyOrgState(db, org, { serverKey: config.serverKey });
    }
    const started = performance.now();
    server = await startServer({
      config,
      db,
      env: {},
      logger: pino({ level: "silent" }),
      // Each node's AMI target from its row, as `serve` builds it, counting the reloads sent.
      nodeTarget: (node) => {
        const inner = createAmiTarget({
          host: node.ami_host,
          port: node.ami_port,
          username: node.ami_username,
          secret: engines.find((e) => e.amiPort === node.ami_port)!.amiSecret,
        });
        const sent = reloads.get(node.name) ?? [];
        reloads.set(node.name, sent);
        return {
          ...inner,
          reload(request) {
            sent.push(request.command.command);
            return inner.reload(request);
          },
        };
      },
    });
    await server.ready;
    const nodes = server.nodes!;
    // Each node's deployer lease is taken within a second; its start-up deploy follows.
    for (;;) {
      const runtimes = nodes.list();
      if (runtimes.length === nodeCount && runtimes.every((r) => r.startup !== null)) break;
      await delay(POLL_MS);
    }
    await nodes.started();
    const startupMs = performance.now() - started;

    const views = await listEngineNodes({ db });
    const orgsPerNode = engines.map((_, i) => views.find((v) => v.name === `node-${i + 1}`)!.orgs);

    // The edited org: org 0, placed first, so on node-1.
    const org = syntheticOrg(0);
    const ivr = org.ivrs[0]!;
    const menu = `s@${org.org.context_prefix}ivrm_${ivr.extension}`;
    const node1 = nodes.list().find((r) => r.node.name === "node-1")!;
    const reloadsBefore = engines.map((_, i) => reloads.get(`node-${i + 1}`)?.length ?? 0);
    const editMs: number[] = [];
    let timeout = 20;
    for (let i = 0; i < options.edits; i++) {
      timeout++;
      const res = await fetch(`${server.url}/api/v1/ivrs/${ivr.id}?org_id=${org.org.id}`, {
        method: "PUT",
        headers: { "x-internal-key": INTERNAL_KEY, "content-type": "application/json" },
        body: JSON.stringify({ timeout }),
      });
      if (!res.ok) throw new Error(`PUT /ivrs: ${res.status} ${await res.text()}`);
      const answeredAt = performance.now();
      const deadline = answeredAt + VISIBLE_TIMEOUT_MS;
      for (;;) {
        if ((await cliOf(eyes[0]!, `dialplan show ${menu}`)).includes(`WaitExten(${timeout})`)) {
          break;
        }
        if (performance.now() > deadline) throw new Error(`edit ${i} never visible`);
        await delay(POLL_MS);
      }
      editMs.push(performance.now() - answeredAt);
      await node1.engine.deploys.scheduler.idle();
    }
    const reloadsAfter = engines.map((_, i) => reloads.get(`node-${i + 1}`)?.length ?? 0);
    const moveMs = nodeCount > 1 ? await timeMove(server.url, org.org.id, "node-2") : null;
    return {
      nodes: nodeCount,
      orgsPerNode,
      loadBefore,
      loadAfter: loadavg()[0]!,
      startupMs,
      editMs,
      moveMs,
      reloadsPerNode: reloadsAfter.map((after, i) => after - reloadsBefore[i]!),
    };
  } finally {
    if (server) await server.close().catch(() => {});
    else await db?.destroy();
    for (const eye of eyes) await eye.close();
    for (const engine of engines) await engine.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** `org move` of `orgId` to `node` through the admin API: 202 to `done`, in ms. */
async function timeMove(url: string, orgId: string, node: string): Promise<number> {
  const auth = await fetch(`${url}/api/v1/admin/auth`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ admin_username: "admin", admin_password: ADMIN_PASSWORD }),
  });
  const { token } = (await auth.json()) as { token: string };
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const path = `${url}/api/v1/admin/organizations/${orgId}/move`;
  const asked = await fetch(path, { method: "POST", headers, body: JSON.stringify({ to: node }) });
  if (asked.status !== 202) throw new Error(`move: ${asked.status} ${await asked.text()}`);
  const started = performance.now();
  for (;;) {
    const move = (await (await fetch(path, { headers })).json()) as { phase: string };
    if (move.phase === "done") return performance.now() - started;
    if (performance.now() - started > VISIBLE_TIMEOUT_MS) throw new Error("move never done");
    await delay(POLL_MS * 10);
  }
}

/** Both layouts in one run, then the rows. */
export async function runNodesCompare(options: NodesCompareOptions): Promise<LayoutResult[]> {
  console.log(
    `bench:engine --nodes-compare  ${options.orgs} orgs (50 users, 5 queues, 5 IVRs, 20 DIDs ` +
      `each), ${options.edits} IVR edits of one org per layout; real Asterisk nodes over AMI`,
  );
  const results: LayoutResult[] = [];
  for (const nodeCount of [2, 1]) {
    const result = await measureLayout(options, nodeCount);
    results.push(result);
    printLayout(result);
  }
  return results;
}

export function printLayout(r: LayoutResult): void {
  const edits = r.editMs;
  console.log(
    [
      `  ${r.nodes} node${r.nodes > 1 ? "s" : ""} x ${r.orgsPerNode.join("/")} orgs`,
      `load ${r.loadBefore.toFixed(1)} -> ${r.loadAfter.toFixed(1)}`,
      `start-up deploy ${ms(r.startupMs)}`,
      `change-to-live p50 ${ms(percentile(edits, 50))} p95 ${ms(percentile(edits, 95))} (n=${edits.length})`,
      `reload commands sent during the edits, per node: ${r.reloadsPerNode.join("/")}`,
      ...(r.moveMs !== null ? [`org move node-1 -> node-2 (no call up): ${ms(r.moveMs)}`] : []),
    ].join("; "),
  );
}
