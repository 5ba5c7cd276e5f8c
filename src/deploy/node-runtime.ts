// Per-node deploys in `serve` (issue 25, docs/nodes.md). Once engine nodes are defined, each node
// that may run calls (state `active` or `draining`; a `down` node is known unreachable and is
// left alone until it is back) gets its own engine side: a Deployer on the node's own directory
// (`<nodes-dir>/<node name>`), its own reload queue (one reload at a time per node, nodes in
// parallel), its own deploy log, the shared deploy requests of the orgs placed on it, its own
// on-request deploy jobs, and its own deployer lease (`deployer:node:<node id>`), which fences
// every reload to that node exactly as the one implicit engine's lease fences its reloads
// (src/deploy/fenced-target.ts, src/replica/roles.ts). A change to one org is deployed by every
// node that holds it: its primary and, when it has one, its standby, which keeps a warm copy (the
// same files and gateway routes, loaded by its engine) so that when the primary dies the SIP
// edge's fallback to the standby finds the org's config there (issue 26); during an `org move`,
// its target and (until the move removes it) its source too. No other node ever gets the org's
// files.
//
// The nodes and placements are rows of the store; every replica reads them again every
// `pollMs` (one cheap fingerprint query; the rows themselves only when it changed) and follows:
// a node added starts its engine side, one removed (or put `down`) stops it, one whose AMI
// address, credentials or name changed is restarted; an org whose nodes changed (a pin, a
// standby set or cleared, an `org move`) or that was deleted is deployed again on every node it
// left (which removes its files) and every node it reached. A deploy missed in between (a replica died) is caught up by
// the next holder of the node's lease, whose start deploys whatever differs.
import { join } from "node:path";
import type { Logger } from "pino";
import { BackgroundTimer, type Clock, systemClock, systemTimers, type Timers } from "../clock.js";
import type { ConfigDeploys } from "../domain/config/config-deploy.js";
import type { DeployScheduler } from "../domain/ports.js";
import type { EngineTarget } from "../engine/target.js";
import type { EngineNodeRecord } from "../model/stored-records.js";
import type { Db } from "../store/database.js";
import { createDeployRequestRepository } from "../store/deploy-request-repository.js";
import {
  findPlacement,
  listEngineNodes,
  listOrgHolders,
  nodeTopologyFingerprint,
  orgHolders,
} from "../store/engine-node-repository.js";
import { DeployerUnavailableError, DeployJobs } from "./deploy-jobs.js";
import { nodeSoundsDir } from "./node-dirs.js";
import { NodeMediaCopies } from "./node-media.js";
import { SharedDeploys } from "./shared-deploys.js";
import {
  type GatewayOutcome,
  type OrgDeployOutcome,
  type OrgStatus,
  type ReloadResult,
  UnknownOrgError,
} from "./store-deploys.js";
import { createServerEngine, type ServerEngine, type ServerEngineOptions } from "./store-engine.js";

/** Why an on-request deploy cannot run: the org's node is down (said without naming it). */
const ENGINE_DOWN = "The engine this organization runs on is down; deploys resume when it is back";

/** How often every replica looks at the nodes and placements again. */
export const NODE_TOPOLOGY_POLL_MS = 1000;

/** The lease of a node's deployer. */
export function nodeDeployerRole(nodeId: string): string {
  return `deployer:node:${nodeId}`;
}

/** A node's engine directory under the nodes directory (`PBX_NODES_DIR`). */
export function nodeEngineDir(nodesDir: string, nodeName: string): string {
  return join(nodesDir, nodeName);
}

/** The part of ReplicaRoles the node runtimes use. */
export interface NodeRoles {
  add(role: { name: string; start(): void | Promise<void>; stop(): void | Promise<void> }): void;
  remove(name: string): Promise<void>;
  assertHolds(name: string): Promise<void>;
}

export interface NodeRuntimesOptions {
  db: Db;
  replicaId: string;
  roles: NodeRoles;
  /** Where each node's engine directory is (`<nodesDir>/<node name>`). */
  nodesDir: string;
  /**
   * The replicas' sounds directory (PBX_SOUNDS_DIR): each node's deployer copies its orgs' media
   * from it into `<nodesDir>/<node name>.sounds` (src/deploy/node-media.ts). Absent: no copies.
   */
  soundsDir?: string;
  /** The engine target of a node (AMI with its unsealed secret; a fake in tests). */
  targetFor: (node: EngineNodeRecord) => EngineTarget;
  /** What every node's engine side shares with the implicit one (env, data dir, instruments...). */
  engineOptions: Omit<
    ServerEngineOptions,
    "target" | "shared" | "reloadFence" | "nodeId" | "node" | "engineDir" | "realtimeTarget"
  >;
  logger?: Logger;
  clock?: Clock;
  timers?: Timers;
  pollMs?: number;
  /** Told when the install goes from no node to some nodes or back (the implicit engine's role). */
  onNodesDefined?: (defined: boolean) => void | Promise<void>;
  /** Told when a node's engine side starts (its events are to be followed too). */
  onFollow?: (node: EngineNodeRecord) => void;
  /** Told when a node's engine side stopped (removed, down or changed). */
  onUnfollow?: (nodeId: string) => Promise<void>;
}

/** One node's engine side in this replica. */
export interface NodeRuntime {
  node: EngineNodeRecord;
  role: string;
  engine: ServerEngine;
  shared: SharedDeploys;
  jobs: DeployJobs;
  /** The deploy this replica ran when it last took the node's lease; null until it does. */
  startup: Promise<unknown> | null;
}

/** What makes a node's engine side another one: restarted when any of these changes. */
function identityOf(node: EngineNodeRecord): string {
  return JSON.stringify([
    node.name,
    node.ami_host,
    node.ami_port,
    node.ami_username,
    node.ami_secret_sealed,
  ]);
}

/** Whether the node's engine side runs: a `down` node is known unreachable. */
function runs(node: EngineNodeRecord): boolean {
  return node.state !== "down";
}

/**
 * The engine sides of every node, kept in step with the store; also the server's DeployScheduler
 * and ConfigDeploys while nodes are defined (each org's work goes to its node's engine side).
 */
export class NodeRuntimes implements DeployScheduler, ConfigDeploys {
  private readonly runtimes = new Map<string, NodeRuntime>();
  private readonly identities = new Map<string, string>();
  /** The nodes holding every placed org (primary, standby, a move's sides), as of the last look. */
  private placements = new Map<string, string[]>();
  private fingerprint: string | null = null;
  private defined: boolean | null = null;
  private closing = false;
  private readonly timers: Timers;
  private readonly pollTimer: BackgroundTimer;
  private refreshing: Promise<void> | null = null;
  private readonly requests;

  constructor(private readonly options: NodeRuntimesOptions) {
    this.timers = options.timers ?? systemTimers;
    this.pollTimer = new BackgroundTimer(this.timers);
    this.requests = createDeployRequestRepository(options.db);
  }

  /** Whether engine nodes are defined (as of the last look). */
  get nodesDefined(): boolean {
    return this.defined === true;
  }

  /** The engine sides running in this replica, by node name. */
  list(): NodeRuntime[] {
    return [...this.runtimes.values()].sort((a, b) => a.node.name.localeCompare(b.node.name));
  }

  /** Settles when the start-up deploys of the nodes this replica deploys have finished. */
  async started(): Promise<void> {
    await Promise.all(this.list().map((runtime) => runtime.startup));
  }

  /** The engine side of node `nodeId`, if it runs here. */
  runtimeOf(nodeId: string): NodeRuntime | undefined {
    return this.runtimes.get(nodeId);
  }

  /** Follows the store from now on (one look now, then every `pollMs`). */
  async start(): Promise<void> {
    await this.refresh();
  }

  /**
   * One look at the nodes and placements: engine sides started, stopped or restarted, and orgs
   * whose node changed deployed on both nodes. Resolves once the changes are made.
   */
  refresh(): Promise<void> {
    this.refreshing ??= this.look()
      .catch((error: unknown) =>
        this.options.logger?.error({ err: error }, "reading engine nodes failed"),
      )
      .finally(() => {
        this.refreshing = null;
        if (!this.closing) {
          this.pollTimer.arm(this.options.pollMs ?? NODE_TOPOLOGY_POLL_MS, () => this.refresh());
        }
      });
    return this.refreshing;
  }

  private async look(): Promise<void> {
    const fingerprint = await nodeTopologyFingerprint(this.options.db);
    if (fingerprint === this.fingerprint || this.closing) return;
    const nodes = await listEngineNodes(this.options.db);
    const placements = await listOrgHolders(this.options.db);
    const defined = nodes.length > 0;
    if (defined !== this.defined) {
      this.defined = defined;
      await this.options.onNodesDefined?.(defined);
    }
    const wanted = new Map(nodes.filter(runs).map((node) => [node.id, node]));
    for (const [id, runtime] of [...this.runtimes]) {
      const next = wanted.get(id);
      if (next && identityOf(next) === this.identities.get(id)) {
        runtime.node = next;
        continue;
      }
      await this.stopRuntime(runtime, next ? "changed" : "removed");
    }
    for (const node of wanted.values()) {
      if (!this.runtimes.has(node.id)) this.startRuntime(node);
    }
    // Orgs whose nodes changed (or that were deleted) since the last look: a node they left
    // removes their files, a node they reached adds them; a node that holds them still (a
    // standby made primary) has the same files already. The first look has nothing to compare:
    // the engine sides just started deploy whatever differs anyway.
    if (this.fingerprint !== null) {
      for (const [orgId, before] of this.placements) {
        const after = placements.get(orgId) ?? [];
        for (const nodeId of before) {
          if (!after.includes(nodeId)) this.placementChangedOn(nodeId, orgId);
        }
        for (const nodeId of after) {
          if (!before.includes(nodeId)) this.placementChangedOn(nodeId, orgId);
        }
      }
    }
    this.placements = placements;
    this.fingerprint = fingerprint;
  }

  /** A background deploy of the org on `nodeId`, when this replica is that node's deployer. */
  private scheduleOn(nodeId: string, orgId: string): void {
    const runtime = this.runtimes.get(nodeId);
    if (runtime?.shared.deploying) runtime.engine.deploys.scheduleDeploy(orgId);
  }

  /**
   * The org reached or left `nodeId`: deployed there, and with realtime PJSIP the node's engine
   * told at once, since its views changed with the placement (src/deploy/realtime-pjsip.ts).
   */
  private placementChangedOn(nodeId: string, orgId: string): void {
    this.scheduleOn(nodeId, orgId);
    const runtime = this.runtimes.get(nodeId);
    if (runtime?.shared.deploying) void runtime.engine.realtime?.placementChanged(orgId);
  }

  private startRuntime(node: EngineNodeRecord): void {
    const role = nodeDeployerRole(node.id);
    const { logger, db, replicaId } = this.options;
    const nodeLogger = logger?.child({ node: node.name });
    const shared = new SharedDeploys({
      db,
      replicaId,
      nodeId: node.id,
      ...(nodeLogger ? { logger: nodeLogger } : {}),
      ...(this.options.engineOptions.timers ? { timers: this.options.engineOptions.timers } : {}),
    });
    const target = this.options.targetFor(node);
    const engine = createServerEngine({
      ...this.options.engineOptions,
      ...(nodeLogger ? { logger: nodeLogger } : {}),
      target,
      nodeId: node.id,
      node: { id: node.id, name: node.name },
      engineDir: nodeEngineDir(this.options.nodesDir, node.name),
      shared,
      ...(this.options.soundsDir !== undefined
        ? {
            media: new NodeMediaCopies({
              db,
              nodeId: node.id,
              sourceDir: this.options.soundsDir,
              nodeDir: nodeSoundsDir(this.options.nodesDir, node.name),
              // Like the node's reloads: only the holder of its deployer lease changes its copies.
              fence: () => this.options.roles.assertHolds(role),
            }),
          }
        : {}),
      reloadFence: () => this.options.roles.assertHolds(role),
    });
    const jobs = new DeployJobs({
      db,
      replicaId,
      deploys: engine.deploys,
      nodeId: node.id,
      ...(nodeLogger ? { logger: nodeLogger } : {}),
    });
    const runtime: NodeRuntime = { node, role, engine, shared, jobs, startup: null };
    this.runtimes.set(node.id, runtime);
    this.identities.set(node.id, identityOf(node));
    let terms = 0;
    this.options.roles.add({
      name: role,
      start: () => {
        const trigger = terms++ === 0 ? "startup" : "takeover";
        runtime.startup = engine.start(trigger).catch((error: unknown) => {
          nodeLogger?.error({ err: error }, `${trigger} deploy failed`);
          return null;
        });
        jobs.startServing();
      },
      stop: async () => {
        await jobs.stopServing();
        await runtime.startup;
        // Shutting down: what this replica's saves left pending is deployed first (SIGTERM's
        // promise). Lost the lease, or the node changed: the requests stay in the store.
        await shared.stopDeploying({ flush: this.closing });
      },
    });
    this.options.onFollow?.(node);
    nodeLogger?.info({ engine_dir: engine.paths.asteriskDir }, "engine node followed");
  }

  private async stopRuntime(runtime: NodeRuntime, why: string): Promise<void> {
    this.runtimes.delete(runtime.node.id);
    this.identities.delete(runtime.node.id);
    await this.options.roles.remove(runtime.role);
    await runtime.engine.close({ flush: false });
    await this.options.onUnfollow?.(runtime.node.id);
    this.options.logger?.info({ node: runtime.node.name, why }, "engine node no longer followed");
  }

  /** Stops following; each node's deployer role flushes its pending deploys as it stops. */
  async close(): Promise<void> {
    this.closing = true;
    this.pollTimer.cancel();
    await this.refreshing;
  }

  /** After the roles stopped: closes every node's engine connection. */
  async closeEngines(): Promise<void> {
    for (const runtime of [...this.runtimes.values()]) {
      this.runtimes.delete(runtime.node.id);
      await runtime.engine.close({ flush: true });
    }
  }

  /** The engine side holding `orgId` as primary; UnknownOrgError when none runs here. */
  private async runtimeFor(orgId: string): Promise<NodeRuntime> {
    let placement = await findPlacement(this.options.db, orgId);
    if (placement && !this.runtimes.has(placement.node_id)) {
      // Placed on a node this replica has not seen yet (added a moment ago): look again.
      await this.refresh();
      placement = await findPlacement(this.options.db, orgId);
    }
    if (!placement) throw new UnknownOrgError(`organization ${orgId} not found`);
    const runtime = this.runtimes.get(placement.node_id);
    // Placed on a node that is down: nothing is sent to it until it is back (503; an org is
    // never told which node it runs on).
    if (!runtime) throw new DeployerUnavailableError(ENGINE_DOWN);
    return runtime;
  }

  // DeployScheduler: the save's request goes into the store as with one engine; this replica's
  // own deploy of it starts on the org's node when this replica is that node's deployer.

  async recordDeploy(db: Db, orgId: string): Promise<void> {
    await createDeployRequestRepository(db).request(
      orgId,
      this.options.replicaId,
      (this.options.clock ?? systemClock)().toISOString(),
    );
  }

  scheduleDeploy(orgId: string): void {
    void orgHolders(this.options.db, orgId)
      .then((holders) => {
        // Every node holding the org (primary, standby, a move's sides); an org deleted a moment
        // ago is removed from the nodes that held it as of the last look.
        const nodeIds = holders.length > 0 ? holders : (this.placements.get(orgId) ?? []);
        for (const nodeId of nodeIds) this.runtimes.get(nodeId)?.shared.scheduleDeploy(orgId);
      })
      .catch((error: unknown) =>
        this.options.logger?.error({ err: error, org_id: orgId }, "scheduling a deploy failed"),
      );
  }

  /** Orgs saved and not live yet, over every node this replica deploys. */
  owedDeploys(): { orgs: number; oldestSeconds: number } {
    let orgs = 0;
    let oldestSeconds = 0;
    for (const runtime of this.runtimes.values()) {
      const owed = runtime.engine.deploys.scheduler.owedDeploys();
      orgs += owed.orgs;
      oldestSeconds = Math.max(oldestSeconds, owed.oldestSeconds);
    }
    return { orgs, oldestSeconds };
  }

  /** Whether a request of the org is pending in the store (any node). */
  requested(orgId: string): Promise<boolean> {
    return this.requests.isPending(orgId);
  }

  // ConfigDeploys: an org's on-request deploys and status go to its primary node's deployer.

  /** Deployed on the primary now (answered from it); the standby's copy follows in background. */
  async deployOrgNow(orgId: string): Promise<OrgDeployOutcome> {
    const outcome = await (await this.runtimeFor(orgId)).jobs.deployOrgNow(orgId);
    const [, ...others] = await orgHolders(this.options.db, orgId);
    for (const nodeId of others) this.scheduleOn(nodeId, orgId);
    return outcome;
  }

  /**
   * Deploys what node `nodeId` is to hold of the org now (its files, or their removal when it no
   * longer holds it) and its gateway, through the node's deployer wherever it runs, and resolves
   * once both are applied and verified (`org move`'s steps). False when the node's engine side
   * does not run (the node is `down` or gone): nothing can be sent to it; a node back from `down`
   * is caught up by its start-up deploy. Throws when a deploy failed.
   */
  async deployOn(nodeId: string, orgId: string): Promise<boolean> {
    const runtime = this.runtimes.get(nodeId);
    if (!runtime) return false;
    const outcome = await runtime.jobs.deployOrgNow(orgId);
    const gateway = await runtime.jobs.regenerateGateway("move");
    const failed = [outcome.record, ...outcome.related, gateway.record].find(
      (record) => record.result === "failed",
    );
    if (failed) {
      throw new Error(
        `deploy of ${failed.unit} on node ${runtime.node.name} failed: ${failed.error ?? "unknown"}`,
      );
    }
    return true;
  }

  async reloadOrg(orgId: string): Promise<ReloadResult> {
    return (await this.runtimeFor(orgId)).jobs.reloadOrg(orgId);
  }

  async orgStatus(orgId: string, options?: { limit?: number }): Promise<OrgStatus> {
    return (await this.runtimeFor(orgId)).jobs.orgStatus(orgId, options);
  }

  /**
   * Every node's gateway regenerated (each dispatches only its orgs' DIDs): the counts summed,
   * the record of the first node whose deploy failed, else of the first node by name.
   */
  async regenerateGateway(trigger = "regenerate"): Promise<GatewayOutcome> {
    const outcomes = await Promise.all(
      this.list().map((runtime) => runtime.jobs.regenerateGateway(trigger)),
    );
    if (outcomes.length === 0) throw new DeployerUnavailableError(ENGINE_DOWN);
    const failed = outcomes.find((o) => o.record.result === "failed");
    return {
      didCount: outcomes.reduce((sum, o) => sum + o.didCount, 0),
      orgCount: outcomes.reduce((sum, o) => sum + o.orgCount, 0),
      record: (failed ?? outcomes[0]!).record,
    };
  }
}
