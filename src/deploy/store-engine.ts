// The server's engine side, built from the environment: the engine target (PBX_ENGINE), a
// Deployer on the engine directory (`<data-dir>/asterisk` or PBX_ASTERISK_DIR) with the
// store-backed deploy log, and the store-backed deploy service. One function, so `pbxctl serve`,
// `startServer` and the integration tests wire the same thing.
import { resolve } from "node:path";
import type { Logger } from "pino";
import type { Timers } from "../clock.js";
import {
  edgeSettingsFrom,
  engineSettingsFrom,
  gatewayOptionsFrom,
  type PjsipMode,
  pjsipModeFrom,
  resolveEnginePaths,
} from "../config.js";
import type { AmiConnection } from "../engine/ami-connection.js";
import {
  createEngineTarget,
  type EnginePaths,
  type EngineTarget,
  engineHealthProbe,
} from "../engine/index.js";
import { realtimePjsipTarget } from "../engine/realtime-pjsip-target.js";
import { type Instruments, noInstruments } from "../metrics/instruments.js";
import type { GatewayOptions } from "../model/gateway.js";
import type { Db } from "../store/database.js";
import { Deployer } from "./deployer.js";
import { fencedTarget, type ReloadFence } from "./fenced-target.js";
import type { OrgMediaSync } from "./node-media.js";
import { claimEngineDir, foreignOwnerReason } from "./ownership.js";
import { RealtimePjsip, type RealtimeTrace } from "./realtime-pjsip.js";
import type { ReloadQueueOptions } from "./reload-queue.js";
import type { SharedDeploys } from "./shared-deploys.js";
import { StoreBuilds } from "./store-builds.js";
import { StoreDeployLog } from "./store-deploy-log.js";
import { type StartupSummary, StoreDeploys } from "./store-deploys.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface ServerEngineOptions {
  env: Env;
  dataDir: string;
  db: Db;
  logger?: Logger;
  /** Default: built from `env` (PBX_ENGINE, PBX_AMI_*). */
  target?: EngineTarget;
  /**
   * Realtime PJSIP's own engine session (cache expiries and endpoint checks). Default: `target`
   * when one is given, else a second one built from `env`: AMI runs one action at a time per
   * session, and the deployer's session spends minutes in a dialplan reload at 1,000 orgs, which
   * a new user's expiry must not wait behind.
   */
  realtimeTarget?: EngineTarget;
  /** Told each step of realtime PJSIP's path after a save (bench:engine's trace). */
  realtimeTrace?: RealtimeTrace;
  timers?: Timers;
  debounceMs?: number;
  maxDelayMs?: number;
  reloadQueueOptions?: ReloadQueueOptions;
  /**
   * The deploy requests shared by the replicas of one store: background deploys then close the
   * requests they covered, and `start()` takes over what is pending. Absent: this process is
   * the only deployer and its saves come only from itself.
   */
  shared?: SharedDeploys;
  /**
   * Checked right before and after each reload and each realtime cache expiry (the deployer
   * lease, src/deploy/fenced-target.ts); absent: this process sends them unchecked (it is the
   * only one).
   */
  reloadFence?: ReloadFence;
  /** Orgs per batch of the start-up deploy (default 100). */
  startupBatchSize?: number;
  /** Deploy, reload and AMI measurements (src/metrics); default none. */
  instruments?: Instruments;
  /**
   * The engine node this side deploys to (issue 25, src/deploy/node-runtime.ts): its builds hold
   * only the orgs placed on it and its deploy log is its own. Absent: the one implicit engine.
   */
  nodeId?: string;
  /** The node's id and name (realtime PJSIP reads the node's own views); with `nodeId`. */
  node?: { id: string; name: string };
  /** Overrides the engine directory of `env` (a node's own directory). */
  engineDir?: string;
  /** A node's copies of its orgs' media (src/deploy/node-media.ts); absent: none are made. */
  media?: OrgMediaSync;
}

export interface ServerEngine {
  paths: EnginePaths;
  target: EngineTarget;
  deployer: Deployer;
  deploys: StoreDeploys;
  gateway: GatewayOptions;
  /** The engine state for /health: `files-only`, `connected` or `disconnected`. */
  engineHealth: () => string;
  /** PBX_PJSIP: where Asterisk reads PJSIP endpoints, auths and AORs from. */
  pjsipMode: PjsipMode;
  /** Realtime PJSIP's rows and the engine's pending objects; null in file mode. */
  realtime: RealtimePjsip | null;
  /**
   * Deploys whatever differs so the engine directory is complete and current (at start-up, or
   * when this replica takes the deployer role over: `trigger`), then follows deploy requests.
   */
  start(trigger?: string): Promise<StartupSummary>;
  /** Runs pending deploys (or drops them with `flush: false`), then closes the engine target. */
  close(options?: { flush?: boolean }): Promise<void>;
}

/** Builds the engine side of the server; nothing is deployed until `start()`. */
export function createServerEngine(options: ServerEngineOptions): ServerEngine {
  const resolved = resolveEnginePaths(options.env, options.dataDir);
  const paths = options.engineDir ? { ...resolved, asteriskDir: options.engineDir } : resolved;
  const nodeId = options.nodeId;
  const gateway = gatewayOptionsFrom(options.env);
  const instruments = options.instruments ?? noInstruments;
  const pjsipMode = pjsipModeFrom(options.env);
  const engineTarget = options.target ?? createEngineTarget(engineSettingsFrom(options.env));
  // Realtime mode never reloads res_pjsip: a changed pjsip.conf (trunks' identify only) reloads
  // the identify module instead.
  const target = pjsipMode === "realtime" ? realtimePjsipTarget(engineTarget) : engineTarget;
  // The deployer's AMI session (the events connection is call tracking's).
  (target as { connection?: AmiConnection }).connection?.instrument(instruments.ami("deploy"));
  const deployer = new Deployer({
    engineDir: paths.asteriskDir,
    target: options.reloadFence ? fencedTarget(target, options.reloadFence) : target,
    log: new StoreDeployLog(options.db, nodeId),
    owner: { kind: "store", dataDir: resolve(options.dataDir) },
    reloadQueueOptions: { ...options.reloadQueueOptions, instruments: instruments.reloads },
  });
  const logger = options.logger;
  const shared = options.shared;
  const builds = new StoreBuilds({
    db: options.db,
    gateway,
    soundsDir: paths.soundsDir,
    pjsip: pjsipMode,
    behindEdge: edgeSettingsFrom(options.env) !== null,
    ...(nodeId !== undefined ? { nodeId } : {}),
  });
  const realtimeTarget =
    pjsipMode !== "realtime"
      ? null
      : (options.realtimeTarget ??
        (options.target ? engineTarget : createEngineTarget(engineSettingsFrom(options.env))));
  const realtime =
    realtimeTarget !== null
      ? new RealtimePjsip({
          db: options.db,
          builds,
          // Not the file deployer's wrapped target: it verifies endpoints against their rows.
          // Fenced like the reloads: a replica that lost the deployer lease sends no expiry.
          target: options.reloadFence
            ? fencedTarget(realtimeTarget, options.reloadFence)
            : realtimeTarget,
          reloads: deployer.reloads,
          ...(options.node ? { node: options.node } : {}),
          ...(options.realtimeTrace ? { trace: options.realtimeTrace } : {}),
          ...(options.timers ? { timers: options.timers } : {}),
          ...(logger ? { logger } : {}),
        })
      : null;
  const deploys = new StoreDeploys({
    ...(shared
      ? {
          onBuildStart: (orgId: string) => shared.buildStarting(orgId),
          requested: (orgId: string) => shared.requested(orgId),
        }
      : {}),
    builds,
    deployer,
    ...(realtime ? { pjsipRows: realtime } : {}),
    ...(options.media ? { media: options.media } : {}),
    ...(options.timers ? { timers: options.timers } : {}),
    ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
    ...(options.maxDelayMs !== undefined ? { maxDelayMs: options.maxDelayMs } : {}),
    ...(options.startupBatchSize !== undefined
      ? { startupBatchSize: options.startupBatchSize }
      : {}),
    instruments: instruments.deploys,
    onError: (orgId, error) =>
      logger?.error({ org_id: orgId, err: error.message }, "background deploy failed"),
    onDeployed: (orgId, records) => {
      shared
        ?.deployed(
          orgId,
          records.every((r) => r.result !== "failed"),
        )
        .catch((error: unknown) =>
          logger?.error({ org_id: orgId, err: error }, "closing deploy requests failed"),
        );
      const changed = records.filter((r) => r.result !== "unchanged");
      if (changed.length === 0) return;
      logger?.info(
        {
          org_id: orgId,
          units: changed.map((r) => ({
            unit: r.unit,
            result: r.result,
            revision: r.revision.slice(0, 12),
            files: [...r.filesWritten, ...r.filesRemoved],
            reloads: r.reloads.map((o) => `${o.command} (${o.status})`),
          })),
        },
        "deployed",
      );
    },
  });
  return {
    paths,
    target,
    deployer,
    deploys,
    gateway,
    engineHealth: engineHealthProbe(target),
    pjsipMode,
    realtime,
    async start(trigger = "startup") {
      // The server deploys whatever differs at start-up: a directory another source wrote is
      // taken over (said in the log), so `pbxctl deploy` refuses it from now on.
      const owner = { kind: "store" as const, dataDir: resolve(options.dataDir) };
      const foreign = await foreignOwnerReason(paths.asteriskDir, owner);
      if (foreign) {
        logger?.warn(
          { engine_dir: paths.asteriskDir, reason: foreign },
          "taking over the engine directory",
        );
        await claimEngineDir(paths.asteriskDir, owner, { replace: true });
      }
      const summary = shared
        ? await shared.startDeploying(deploys, trigger)
        : await deploys.deployEverything(trigger);
      logger?.info(
        {
          engine_dir: paths.asteriskDir,
          engine: target.kind,
          units: summary.units,
          changed: summary.changed.map((r) => r.unit),
          failed: summary.failed.map((r) => `${r.unit}: ${r.error}`),
          duration_ms: summary.durationMs,
        },
        "engine directory up to date",
      );
      return summary;
    },
    async close(closeOptions = {}) {
      try {
        await deploys.stop(closeOptions);
        await realtime?.stop();
      } finally {
        await target.close();
        if (realtimeTarget && realtimeTarget !== engineTarget) await realtimeTarget.close();
      }
    },
  };
}
