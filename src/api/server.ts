// Starts the HTTP server over a migrated store and stops it cleanly.
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { systemClock } from "../clock.js";
import { amiOptionsFrom, type Config, engineKindFrom } from "../config.js";
import { DeployJobs } from "../deploy/deploy-jobs.js";
import { alsoToEdge, EDGE_SYNC_ROLE, EdgeSync, type EdgeSyncOptions } from "../deploy/edge-sync.js";
import { NodeRuntimes } from "../deploy/node-runtime.js";
import { SharedDeploys } from "../deploy/shared-deploys.js";
import type { StartupSummary } from "../deploy/store-deploys.js";
import {
  createServerEngine,
  type ServerEngine,
  type ServerEngineOptions,
} from "../deploy/store-engine.js";
import {
  type RetentionScheduler,
  startRetentionScheduler,
} from "../domain/compliance/retention-scheduler.js";
import type { ConfigDeploys } from "../domain/config/config-deploy.js";
import {
  ORG_MOVES_ROLE,
  OrgMoveDriver,
  type OrgMoveDriverOptions,
} from "../domain/nodes/org-move-driver.js";
import { type DeployScheduler, type EngineHealthProbe, noDeploys } from "../domain/ports.js";
import { decrypt } from "../domain/secrets.js";
import { startWebhookService, type WebhookService } from "../domain/webhooks/webhook-service.js";
import { createAmiTarget } from "../engine/ami-target.js";
import type { EngineTarget } from "../engine/index.js";
import { mediaDirsProbe } from "../media-check.js";
import { type Instruments, noInstruments } from "../metrics/instruments.js";
import { createMetrics, type Metrics } from "../metrics/registry.js";
import type { EngineNodeRecord } from "../model/stored-records.js";
import { ReplicaRoles, type ReplicaRolesOptions } from "../replica/roles.js";
import { type Db, followStoreChanges, openMigratedStore, openStore } from "../store/database.js";
import { createTicketService, type TicketService } from "../tickets/service.js";
import { createApp, type PbxApp } from "./app.js";
import { type CallTracking, startCallTracking } from "./call-tracking.js";
import { nodesEngineHealth } from "./engine-health.js";
import { EVENTS_PATH } from "./intake-app.js";
import { storeMetricSources } from "./metric-sources.js";
import { listenForMetrics } from "./metrics-endpoint.js";
import { NodeCallTracking } from "./node-call-tracking.js";
import { orgMoveEngines } from "./org-move-engines.js";

export interface RunningServer {
  url: string;
  server: Server;
  pbx: PbxApp;
  /** The engine side (absent when the caller passed its own deployScheduler). */
  engine: ServerEngine | null;
  /** Saves as deploy requests in the store, deployed by whichever replica holds the deployer role. */
  deployRequests: SharedDeploys;
  /** The SIP edge's sync, when config.edge is set. */
  edgeSync: EdgeSync | null;
  /** Call records and live calls from the engine's events (fed by AMI when PBX_ENGINE is ami). */
  calls: CallTracking;
  /** Every engine node's call tracking (issue 25); null when the caller passed a deployScheduler. */
  nodeCalls: NodeCallTracking | null;
  /** Auto-tickets: the intake under /events, the call-record poller, the message outbox. */
  tickets: TicketService;
  /** The roles this replica runs while it holds their lease (deployer, ingest, poller, retention). */
  roles: ReplicaRoles;
  /**
   * The engine side of each engine node (issue 25): while nodes are defined, saves and
   * on-request deploys go to the org's node; null when the caller passed its own deployScheduler.
   */
  nodes: NodeRuntimes | null;
  /** The driver of `org move` (runs while this replica holds the `org-moves` lease). */
  moves: OrgMoveDriver | null;
  /** The process's metrics (also at /metrics); null when started without. */
  metrics: Metrics | null;
  /** The PBX_METRICS_LISTEN listener's URL, when one was asked for. */
  metricsUrl: string | null;
  /**
   * Settles when the start-up deploy has made the engine directory complete and current (it
   * runs after the server listens, so an unreachable engine does not delay /health).
   */
  ready: Promise<StartupSummary | null>;
  /**
   * Stops accepting connections, waits for open requests, runs pending deploys, closes the
   * engine target and the store.
   */
  close(): Promise<void>;
}

export interface StartServerOptions {
  config: Config;
  logger: Logger;
  db?: Db;
  /** False: refuse a store whose schema is behind instead of migrating it (`serve --no-migrate`). */
  migrate?: boolean;
  /** A scheduler of the caller's (tests): no engine is built, `/config/*` answers 503. */
  deployScheduler?: DeployScheduler;
  engineHealth?: EngineHealthProbe;
  /** Environment of the engine side (PBX_ENGINE, PBX_AMI_*, PBX_ASTERISK_DIR...); default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Default: a new registry; null: nothing measured, no /metrics (the bench's baseline). */
  metrics?: Metrics | null;
  /** Overrides for the engine side (a target, a clock), for tests. */
  engineOptions?: Partial<Omit<ServerEngineOptions, "db" | "dataDir" | "env" | "shared">>;
  /** Lease timing and clocks of the replica's roles, for tests. */
  roleOptions?: Partial<Omit<ReplicaRolesOptions, "db" | "replicaId">>;
  /** The engine target of an engine node (default: AMI with its unsealed secret), for tests. */
  nodeTarget?: (node: EngineNodeRecord) => EngineTarget;
  /** How often the nodes and placements are looked at again (default 1 s), for tests. */
  nodePollMs?: number;
  /** Builds each engine node's call tracking (default: over the node's AMI), for tests. */
  nodeCallTracking?: typeof startCallTracking;
  /** The edge sync's JSON-RPC and timing, for tests (with config.edge). */
  edgeOptions?: Partial<Omit<EdgeSyncOptions, "db" | "edge">>;
  /** The org moves' clock, timers and waits, for tests. */
  moveOptions?: Partial<Pick<OrgMoveDriverOptions, "clock" | "timers" | "pollMs" | "retryMs">>;
}

/** The domain's scheduler, recording and pushing edge changes too when there is an edge. */
function withEdge(scheduler: DeployScheduler, edgeSync: EdgeSync | null): DeployScheduler {
  return edgeSync ? alsoToEdge(scheduler, edgeSync) : scheduler;
}

function urlOf(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  return `http://${host}:${port}`;
}

/** Opens (and migrates) the store, builds the app and listens on config.host:config.port. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const db =
    options.db ??
    (options.migrate === false
      ? await openMigratedStore(options.config.store)
      : await openStore(options.config.store));
  // On PostgreSQL, reads are cached only while the change feed follows the other replicas'
  // commits (one LISTEN connection); on SQLite this does nothing.
  await followStoreChanges(db, (error) =>
    options.logger.warn(
      { err: error },
      "store change feed interrupted: reads uncached until it is back",
    ),
  );
  const replicaId = options.config.replicaId;
  // Several replicas may share this store (issue 23): every one serves the API and delivers
  // webhooks (claims are leases); the roles that must run once are taken by lease.
  const roles = new ReplicaRoles({
    db,
    replicaId,
    logger: options.logger,
    ...options.roleOptions,
  });
  const shared = new SharedDeploys({
    db,
    replicaId,
    logger: options.logger,
    ...(options.engineOptions?.timers ? { timers: options.engineOptions.timers } : {}),
  });
  // The deployer role's lease name, known once the engine's address is (below).
  let deployerRole = "";
  const metrics = options.metrics === undefined ? createMetrics() : options.metrics;
  const instruments = metrics?.instruments ?? noInstruments;
  const engine = options.deployScheduler
    ? null
    : createServerEngine({
        env: options.env ?? process.env,
        dataDir: options.config.dataDir,
        db,
        logger: options.logger,
        instruments,
        ...options.engineOptions,
        shared,
        // Only the deployer-lease holder's reloads go through, each checked before and after.
        reloadFence: () => roles.assertHolds(deployerRole),
      });
  // The SIP edge (PBX_EDGE_DIR): the edge-sync lease holder keeps its tables in step with the
  // store; every replica's org saves record what the edge is owed (src/deploy/edge-sync.ts).
  const edgeSync = options.config.edge
    ? new EdgeSync({
        db,
        edge: options.config.edge,
        logger: options.logger,
        fence: () => roles.assertHolds(EDGE_SYNC_ROLE),
        ...(options.engineOptions?.timers ? { timers: options.engineOptions.timers } : {}),
        ...options.edgeOptions,
      })
    : null;
  // On-request deploys are carried out by the deployer-lease holder (queued from elsewhere).
  const deployJobs = engine
    ? new DeployJobs({
        db,
        replicaId,
        deploys: engine.deploys,
        logger: options.logger,
      })
    : null;
  // Engine nodes (issue 25): once any is defined, each node's engine side deploys the orgs placed
  // on it, and the implicit engine's deployer role is given up (taken again if every node goes).
  const nodes: NodeRuntimes | null = engine
    ? new NodeRuntimes({
        db,
        replicaId,
        roles,
        nodesDir: options.config.nodesDir,
        soundsDir: options.config.soundsDir,
        targetFor:
          options.nodeTarget ??
          ((node) =>
            createAmiTarget({
              host: node.ami_host,
              port: node.ami_port,
              username: node.ami_username,
              secret: decrypt(node.ami_secret_sealed, options.config.serverKey),
            })),
        engineOptions: nodeEngineOptions(options, db, instruments),
        logger: options.logger,
        ...(options.engineOptions?.timers ? { timers: options.engineOptions.timers } : {}),
        ...(options.nodePollMs !== undefined ? { pollMs: options.nodePollMs } : {}),
        onNodesDefined: async (defined) => {
          if (defined) {
            await dropImplicitDeployer();
            addMoveDriver();
          } else {
            await dropMoveDriver();
            addImplicitDeployer();
          }
        },
        onFollow: (node) => nodeCalls?.follow(node),
        onUnfollow: async (nodeId: string): Promise<void> => {
          await nodeCalls?.unfollow(nodeId);
        },
      })
    : null;
  const engineHealth =
    options.engineHealth ??
    (engine && nodes ? nodesOrImplicitHealth(nodes, engine.engineHealth) : undefined);
  // The engine's call events come over their own AMI connection (the deployer's asks for none).
  const env = options.env ?? process.env;
  const ami = engine && engineKindFrom(env) === "ami" ? amiOptionsFrom(env) : null;
  // Every replica follows the engine (live calls, call control); the ingest-lease holder stores.
  const calls = startCallTracking({
    db,
    clock: systemClock,
    logger: options.logger,
    instruments: { calls: instruments.calls, ami: instruments.ami("events") },
    ...(ami ? { ami, standby: true } : {}),
  });
  // Every engine node's events too (issue 25), each node's ingest under its own lease.
  const nodeCalls: NodeCallTracking | null = nodes
    ? new NodeCallTracking({
        db,
        clock: systemClock,
        logger: options.logger,
        roles,
        secretOf: (node) => decrypt(node.ami_secret_sealed, options.config.serverKey),
        implicit: calls,
        nodesDefined: () => nodes.nodesDefined,
        instruments: { calls: instruments.calls, ami: instruments.ami("events") },
        ...(options.nodeCallTracking ? { track: options.nodeCallTracking } : {}),
      })
    : null;
  // The intake is mounted on this server; the poller POSTs to PBX_EVENTS_URL, by default this
  // server's own /events, so one process is the whole service. Without PBX_INTERNAL_KEY the
  // process makes up its own: its poller and bot-extension lookup carry it, and nobody else can
  // POST to the intake or call the internal routes (an open intake would let anyone open tickets
  // for any org).
  const config: Config =
    options.config.internalKey === null
      ? withInternalKey(options.config, randomBytes(32).toString("base64url"))
      : options.config;
  let listeningUrl = "";
  const tickets = createTicketService({
    db,
    clock: systemClock,
    serverKey: options.config.serverKey,
    internalKey: config.internalKey,
    apiUrl: () => listeningUrl,
    eventsUrl: () => options.config.eventsUrl ?? `${listeningUrl}${EVENTS_PATH}`,
    logger: options.logger,
    instruments,
  });
  const pbx = createApp({
    ticketIntake: tickets.intake,
    liveCalls: nodeCalls?.live ?? calls.live,
    callControl: nodeCalls?.control ?? calls.control,
    db,
    config,
    logger: options.logger,
    deployScheduler: withNodeMedia(
      withEdge(
        options.deployScheduler ?? (nodes ? nodesOrImplicitScheduler(nodes, shared) : noDeploys),
        edgeSync,
      ),
      nodes,
    ),
    ...(deployJobs && nodes ? { configDeploys: nodesOrImplicitDeploys(nodes, deployJobs) } : {}),
    ...(engineHealth ? { engineHealth } : {}),
    replica: { id: replicaId, roles: () => roles.held() },
    mediaDirs: mediaDirsProbe(
      { sounds: options.config.soundsDir, recordings: options.config.recordingsDir },
      () => performance.now(),
    ),
    metrics,
  });
  metrics?.watch({
    ...storeMetricSources(db, systemClock),
    liveCalls: () => nodeCalls?.callCount() ?? calls.live.callCount(),
    ...(edgeSync ? { edgeSharedMemory: () => edgeSync.sharedMemory() } : {}),
    ...(engine && nodes
      ? {
          pendingDeploys: () =>
            nodes.nodesDefined ? nodes.owedDeploys() : engine.deploys.scheduler.owedDeploys(),
        }
      : {}),
  });
  const server = pbx.app.listen(options.config.port, options.config.host);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  // Deliveries accepted before a crash are in the outbox; the dispatcher picks them up here.
  let webhooks: WebhookService;
  try {
    webhooks = await startWebhookService({
      db,
      serverKey: options.config.serverKey,
      allowPrivate: options.config.webhookAllowPrivate,
      logger: options.logger,
      instruments: instruments.webhooks,
    });
  } catch (error) {
    server.close();
    await calls.stop();
    throw error;
  }
  let metricsServer: Server | null = null;
  if (metrics && options.config.metricsListen) {
    try {
      metricsServer = await listenForMetrics(metrics, options.config.metricsListen);
    } catch (error) {
      server.close();
      await webhooks.stop();
      await calls.stop();
      throw error;
    }
  }
  listeningUrl = urlOf(server);
  await tickets.start({ poller: false });

  // The roles. The deployer and the ingest are per engine (named by its AMI address, or the
  // files-only engine); the others are one per store.
  const engineName = ami ? `${ami.host}:${ami.port}` : "files";
  deployerRole = `deployer:${engineName}`;
  let closing = false;
  let deployerRun: Promise<StartupSummary | null> | null = null;
  let deployerTerms = 0;
  let implicitDeployer = false;
  // The implicit engine's deployer (no engine node defined): added by the node runtimes' first
  // look (before the first lease round), removed while nodes are defined.
  function addImplicitDeployer(): void {
    if (!engine || implicitDeployer) return;
    implicitDeployer = true;
    roles.add({
      name: deployerRole,
      start: () => {
        const trigger = deployerTerms++ === 0 ? "startup" : "takeover";
        deployerRun = engine.start(trigger).catch((error: unknown) => {
          options.logger.error({ err: error }, `${trigger} deploy failed`);
          return null;
        });
        deployJobs?.startServing();
      },
      stop: async () => {
        await deployJobs?.stopServing();
        await deployerRun;
        // Shutting down: deploy what this replica's saves left pending (SIGTERM's promise).
        // Lost the lease: the requests stay in the store for the next deployer.
        await shared.stopDeploying({ flush: closing });
      },
    });
  }
  // `org move` (issue 25): while nodes are defined, the holder of the `org-moves` lease drives
  // every unfinished move of the store.
  const moves =
    nodes && nodeCalls
      ? new OrgMoveDriver({
          db,
          clock: systemClock,
          engines: orgMoveEngines(nodes, nodeCalls, options.config.edge !== null),
          logger: options.logger,
          ...options.moveOptions,
        })
      : null;
  let moveDriverAdded = false;
  function addMoveDriver(): void {
    if (!moves || moveDriverAdded) return;
    moveDriverAdded = true;
    roles.add({ name: ORG_MOVES_ROLE, start: () => moves.start(), stop: () => moves.stop() });
  }
  async function dropMoveDriver(): Promise<void> {
    if (!moveDriverAdded) return;
    moveDriverAdded = false;
    await roles.remove(ORG_MOVES_ROLE);
  }
  async function dropImplicitDeployer(): Promise<void> {
    if (!implicitDeployer) return;
    implicitDeployer = false;
    await roles.remove(deployerRole);
  }
  await nodes?.start();
  if (ami) {
    roles.add({
      name: `call-ingest:${engineName}`,
      start: () => calls.takeOverIngest(),
      stop: () => calls.standByIngest(),
    });
  }
  const poller = tickets.poller;
  if (poller) {
    roles.add({ name: "ticket-poller", start: () => poller.start(), stop: () => poller.stop() });
  }
  if (edgeSync) {
    roles.add({ name: EDGE_SYNC_ROLE, start: () => edgeSync.start(), stop: () => edgeSync.stop() });
  }
  // Retention (issue 16): every org with a policy is purged daily, and Idempotency-Keys older
  // than a day are swept, by the holder of this role.
  let retention: RetentionScheduler | null = null;
  roles.add({
    name: "retention",
    start: () => {
      retention = startRetentionScheduler({
        context: {
          db,
          recordingsDir: options.config.recordingsDir,
          nodesDir: options.config.nodesDir,
        },
        clock: systemClock,
        logger: options.logger,
        instruments: instruments.retention,
      });
    },
    stop: async () => {
      await retention?.stop();
      retention = null;
    },
  });
  // The first round of leases: a lone server takes every role at once.
  await roles.start();
  await roles.idle();
  const ready: Promise<StartupSummary | null> =
    deployerRun ?? (nodes?.nodesDefined ? nodes.started().then(() => null) : Promise.resolve(null));
  return {
    url: listeningUrl,
    server,
    pbx,
    engine,
    deployRequests: shared,
    edgeSync,
    calls,
    nodeCalls,
    tickets,
    roles,
    nodes,
    moves,
    metrics,
    metricsUrl: metricsServer ? urlOf(metricsServer) : null,
    ready,
    async close() {
      // Not ready first: a load balancer polling /health/ready stops sending new requests.
      pbx.readiness.markShuttingDown();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      try {
        await ready;
        // Saves already answered must still reach the engine: the deployer role flushes pending
        // deploys as it stops; then every lease is given up, so another replica takes over at
        // once instead of after the expiry.
        closing = true;
        await nodes?.close();
        await roles.stop();
        await nodes?.closeEngines();
        await engine?.close({ flush: true });
      } finally {
        await nodeCalls?.stop();
        await calls.stop();
        await tickets.stop();
        await webhooks.stop();
        await pbx.deps.speechEngine?.close?.();
        metricsServer?.close();
        metricsServer?.closeAllConnections();
        await db.destroy();
      }
    },
  };
}

/** What every engine node's engine side shares with the implicit one (never its target). */
function nodeEngineOptions(options: StartServerOptions, db: Db, instruments: Instruments) {
  const { target: _target, realtimeTarget: _realtime, ...rest } = options.engineOptions ?? {};
  return {
    env: options.env ?? process.env,
    dataDir: options.config.dataDir,
    db,
    logger: options.logger,
    instruments,
    ...rest,
  };
}

/** Saves go to the org's node while engine nodes are defined, else to the implicit engine. */
function nodesOrImplicitScheduler(nodes: NodeRuntimes, implicit: DeployScheduler): DeployScheduler {
  const now = () => (nodes.nodesDefined ? nodes : implicit);
  return {
    recordDeploy: (db, orgId) => now().recordDeploy(db, orgId),
    scheduleDeploy: (orgId) => now().scheduleDeploy(orgId),
  };
}

/**
 * `scheduler`, telling the domain that media reaches the engines by copies while engine nodes are
 * defined (src/deploy/node-media.ts): an uploaded greeting then asks for its org's deploy.
 */
function withNodeMedia(scheduler: DeployScheduler, nodes: NodeRuntimes | null): DeployScheduler {
  if (!nodes) return scheduler;
  return {
    recordDeploy: (db, orgId) => scheduler.recordDeploy(db, orgId),
    scheduleDeploy: (orgId) => scheduler.scheduleDeploy(orgId),
    copiesMedia: () => nodes.nodesDefined,
  };
}

/** On-request deploys: the org's node's deployer while nodes are defined, else the implicit one. */
function nodesOrImplicitDeploys(nodes: NodeRuntimes, implicit: ConfigDeploys): ConfigDeploys {
  const now = () => (nodes.nodesDefined ? nodes : implicit);
  return {
    deployOrgNow: (orgId) => now().deployOrgNow(orgId),
    reloadOrg: (orgId) => now().reloadOrg(orgId),
    orgStatus: (orgId, options) => now().orgStatus(orgId, options),
    regenerateGateway: (trigger) => now().regenerateGateway(trigger),
  };
}

/** `/health`'s engine: how many nodes are down (never which: engine-health.ts), or the implicit engine's. */
function nodesOrImplicitHealth(nodes: NodeRuntimes, implicit: () => string): () => string {
  return () =>
    nodes.nodesDefined
      ? nodesEngineHealth(nodes.list().map((runtime) => runtime.engine.engineHealth()))
      : implicit();
}

/**
 * `config` with its internal key replaced. Copied by property descriptors, not spread: a spread
 * would run the admin password hash's getter, the scrypt that `loadConfig` leaves to the first
 * login (docs/performance.md, start-up).
 */
function withInternalKey(config: Config, internalKey: string): Config {
  return Object.defineProperties({} as Config, {
    ...Object.getOwnPropertyDescriptors(config),
    internalKey: { value: internalKey, enumerable: true, writable: true, configurable: true },
  });
}
