// The server's deploy service over the store: background deploys after saves (the debounced
// scheduler), deploys on request (`POST /config/deploy`, `/organizations/{id}/regenerate`),
// gateway regeneration, reloads, the desired-vs-applied status of an org, and the start-up
// deploy that makes the engine directory a complete, loadable set.
import { randomUUID } from "node:crypto";
import type { Timers } from "../clock.js";
import type { CompiledFile } from "../compiler/types.js";
import type { EngineHealth, ReloadOutcome } from "../engine/target.js";
import type { DeployInstruments } from "../metrics/instruments.js";
import type { OrgHandleRecord } from "../model/stored-records.js";
import type { DeployRecord } from "./deploy-log.js";
import type { Deployer } from "./deployer.js";
import type { OrgMediaSync } from "./node-media.js";
import type { RealtimeOrgPending } from "./realtime-status.js";
import { reloadsFor } from "./reloads.js";
import { revisionOf } from "./revision.js";
import { createDeployScheduler, type OrgDeployScheduler } from "./scheduler.js";
import { type GatewayBuild, isServed, type StoreBuilds } from "./store-builds.js";
import { type DeployUnit, orgUnit, type UnitFiles, unitId } from "./units.js";

export interface StoreDeploysOptions {
  builds: StoreBuilds;
  deployer: Deployer;
  timers?: Timers;
  debounceMs?: number;
  maxDelayMs?: number;
  /** Told about every failure of background work (the request that caused it has succeeded). */
  onError?: (orgId: string, error: Error) => void;
  /** Told about each finished background deploy. */
  onDeployed?: (orgId: string, records: DeployRecord[]) => void;
  /** Save-to-applied latency, failures and retries of the background deploys. */
  instruments?: DeployInstruments;
  /** Orgs compiled per deployer batch at start-up (default 100): bounds memory. */
  startupBatchSize?: number;
  /** Told before a background deploy reads the org from the store (the shared deploy requests). */
  onBuildStart?: (orgId: string) => Promise<void>;
  /** Whether a deploy of the org is requested in the store (by any replica) and not done yet. */
  requested?: (orgId: string) => Promise<boolean>;
  /**
   * Realtime PJSIP (PBX_PJSIP=realtime, src/deploy/realtime-pjsip.ts): an org's endpoint, auth
   * and AOR rows are written and the engine told at once on every save, never after the files'
   * debounce; the start-up deploy writes every org's. Absent in file mode.
   */
  pjsipRows?: PjsipRowSync;
  /**
   * An engine node's copies of its orgs' media (src/deploy/node-media.ts): each org's are made
   * current after its build and before its files are deployed, so before the reloads that name
   * them. Absent: the engine plays the replicas' sounds directory itself (one implicit engine).
   */
  media?: OrgMediaSync;
}

/** The part of RealtimePjsip the deploys call. */
export interface PjsipRowSync {
  /** Writes the org's rows and tells the engine; never throws. */
  sync(orgId: string): Promise<void>;
  /** As `sync`, then what of the org is still owed (left to a retry), in words; null: nothing. */
  syncOnRequest(orgId: string): Promise<string | null>;
  /** Every org's rows, then the engine told. */
  syncEverything(): Promise<unknown>;
  /** What the org is owed now: rows not written as compiled, changes engines have not taken. */
  orgPending(orgId: string): Promise<RealtimeOrgPending>;
}

/** What a deploy of one org changed. */
export interface OrgDeployOutcome {
  orgId: string;
  unit: string;
  /** The org unit's record (files, reloads, revision); absent only if the deploy never ran. */
  record: DeployRecord;
  /** Records of the other units deployed with it (the top-level include files). */
  related: DeployRecord[];
}

export interface GatewayOutcome extends Omit<GatewayBuild, "files"> {
  record: DeployRecord;
}

export interface OrgStatus {
  orgId: string;
  unit: string;
  served: boolean;
  /** Hash of what the store compiles to now; null when the compiler refuses it. */
  desiredRevision: string | null;
  /** What the engine last loaded successfully; null when never. */
  appliedRevision: string | null;
  appliedAt: string | null;
  /**
   * True when desired and applied are the same revision and, in realtime PJSIP mode, nothing
   * is owed (`realtimePending`).
   */
  live: boolean;
  /** Realtime PJSIP mode: what the org's rows and engines still owe it. Absent in file mode. */
  realtimePending?: RealtimeOrgPending;
  /** A background deploy is waiting for its debounce timer. */
  deployScheduled: boolean;
  compileError: string | null;
  deploys: DeployRecord[];
}

export interface ReloadResult {
  unit: string;
  reloads: ReloadOutcome[];
  health: EngineHealth | null;
}

export interface StartupSummary {
  units: number;
  changed: DeployRecord[];
  failed: DeployRecord[];
  durationMs: number;
}

/** The org no longer exists (or never did). */
export class UnknownOrgError extends Error {
  override readonly name = "UnknownOrgError";
}

/**
 * The org's record as the on-request deploy answers it when realtime PJSIP still owes the org
 * something: failed, saying what. The deploy log keeps the files' own record (they are deployed;
 * `GET /config/status` compares files). No promise of a retry here: `serve` retries, but
 * `pbxctl apply` exits (docs/engine.md "On-request deploys in realtime mode").
 */
function withRealtimeOwed(record: DeployRecord, owed: string): DeployRecord {
  return { ...record, result: "failed", error: `realtime PJSIP ${owed}` };
}

/** Store-backed deploys of one engine directory; implements the domain's DeployScheduler port. */
export class StoreDeploys {
  readonly scheduler: OrgDeployScheduler;
  private readonly builds: StoreBuilds;
  private readonly deployer: Deployer;
  private readonly buildErrors = new Map<string, Error>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly options: StoreDeploysOptions) {
    this.builds = options.builds;
    this.deployer = options.deployer;
    this.scheduler = createDeployScheduler({
      deployer: options.deployer,
      buildOrg: (orgId) => this.buildOrg(orgId, "schedule"),
      regenerateGateway: () => this.regenerateGateway("schedule"),
      ...(options.timers ? { timers: options.timers } : {}),
      ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
      ...(options.maxDelayMs !== undefined ? { maxDelayMs: options.maxDelayMs } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.onDeployed ? { onDeployed: options.onDeployed } : {}),
      ...(options.instruments ? { instruments: options.instruments } : {}),
    });
  }

  /**
   * Debounced background deploy of the org (returns at once, never throws); in realtime PJSIP
   * mode its rows are written at once, outside the debounce.
   */
  scheduleDeploy(orgId: string): void {
    if (this.options.pjsipRows) void this.track(this.options.pjsipRows.sync(orgId));
    this.scheduler.scheduleDeploy(orgId);
  }

  /**
   * Deploys the org now (a pending background deploy of it is folded in) and resolves with what
   * changed. Throws UnknownOrgError, or the build's error (e.g. CompileRefusedError), which is
   * also recorded. In realtime PJSIP mode, rows not written or changes the engine has not taken
   * (both left to the background retry) make the outcome `failed` with what is owed: the files
   * are deployed all the same, but the org is not live as saved, and `ok` would say it is.
   */
  async deployOrgNow(orgId: string): Promise<OrgDeployOutcome> {
    const handle = await this.builds.org(orgId);
    if (!handle) throw new UnknownOrgError(`organization ${orgId} not found`);
    this.buildErrors.delete(orgId);
    const rowsOwed = (await this.options.pjsipRows?.syncOnRequest(orgId)) ?? null;
    const records = await this.track(this.scheduler.deployNow(orgId));
    const unit = unitId(orgUnit(handle.context_prefix));
    const record = records.find((r) => r.unit === unit);
    if (!record) {
      throw this.buildErrors.get(orgId) ?? new Error(`deploy of ${unit} did not run`);
    }
    const related = records.filter((r) => r !== record);
    if (rowsOwed === null || record.result === "failed") return { orgId, unit, record, related };
    return { orgId, unit, record: withRealtimeOwed(record, rowsOwed), related };
  }

  /** Regenerates the gateway from the store and deploys it (one at a time, via the unit lock). */
  async regenerateGateway(trigger = "regenerate"): Promise<GatewayOutcome> {
    const run = (async () => {
      let build: GatewayBuild;
      try {
        build = await this.builds.gateway();
      } catch (error) {
        await this.recordFailure("gateway", trigger, error as Error);
        throw error;
      }
      // With the top-level files: the first gateway file makes its include line valid, and an
      // include is only written once its file is on disk (include-guard.ts).
      const [record] = await this.deployer.deployUnits(
        [
          { unit: { kind: "gateway" }, files: build.files },
          { unit: { kind: "top" }, files: await this.builds.topLevelFiles() },
        ],
        { trigger },
      );
      return { didCount: build.didCount, orgCount: build.orgCount, record: record! };
    })();
    return this.track(run);
  }

  /** Reloads the engine modules the org's files belong to (its queues by name), then checks health. */
  async reloadOrg(orgId: string): Promise<ReloadResult> {
    const handle = await this.builds.org(orgId);
    if (!handle) throw new UnknownOrgError(`organization ${orgId} not found`);
    const unit = unitId(orgUnit(handle.context_prefix));
    const files = await this.deployer.currentFiles(orgUnit(handle.context_prefix));
    const commands = reloadsFor(
      files.map((f) => ({ path: f.path, before: null, after: f.content })),
    );
    const started = performance.now();
    const reloads = commands.length > 0 ? await this.deployer.reloads.run(commands, unit) : [];
    const ran = reloads.some((outcome) => outcome.status !== "skipped");
    const health = ran ? await this.deployer.target.health().catch(() => null) : null;
    const failed = reloads.filter((outcome) => outcome.status === "failed");
    const applied = await this.deployer.log.applied(unit);
    await this.deployer.log.record({
      id: randomUUID(),
      unit,
      revision: applied?.revision ?? revisionOf(files),
      previousRevision: applied?.revision ?? null,
      trigger: "reload",
      startedAt: this.deployer.clock().toISOString(),
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      result: failed.length > 0 ? "failed" : reloads.length > 0 ? "ok" : "unchanged",
      filesWritten: [],
      filesRemoved: [],
      reloads,
      ...(health ? { health } : {}),
      ...(failed.length > 0 ? { error: failed.map((o) => o.error ?? o.command).join("; ") } : {}),
    });
    return { unit, reloads, health };
  }

  /** Desired (compiled from the store now) beside applied (loaded by the engine), and recent deploys. */
  async orgStatus(orgId: string, options: { limit?: number } = {}): Promise<OrgStatus> {
    const handle = await this.builds.org(orgId);
    if (!handle) throw new UnknownOrgError(`organization ${orgId} not found`);
    const unit = unitId(orgUnit(handle.context_prefix));
    let desiredRevision: string | null = null;
    let compileError: string | null = null;
    try {
      desiredRevision = revisionOf((await this.builds.orgFiles(orgId)).files);
    } catch (error) {
      compileError = (error as Error).message;
    }
    const [applied, deploys, realtimePending] = await Promise.all([
      this.deployer.log.applied(unit),
      this.deployer.log.recent({ unit, limit: options.limit ?? 10 }),
      this.options.pjsipRows?.orgPending(orgId),
    ]);
    // An org that never had files and has none now is live with nothing.
    const appliedRevision = applied?.revision ?? null;
    const filesLive =
      desiredRevision !== null &&
      (desiredRevision === appliedRevision ||
        (appliedRevision === null && desiredRevision === revisionOf([])));
    // Realtime PJSIP: its users and trunks are rows, live once written and taken by the engines.
    const rowsLive =
      realtimePending === undefined ||
      (realtimePending.unwritten === 0 && realtimePending.notTaken === 0);
    return {
      orgId,
      unit,
      served: isServed(handle.status),
      desiredRevision,
      appliedRevision,
      appliedAt: applied?.appliedAt ?? null,
      live: filesLive && rowsLive,
      ...(realtimePending ? { realtimePending } : {}),
      deployScheduled:
        this.scheduler.pendingOrgs.includes(orgId) ||
        ((await this.options.requested?.(orgId)) ?? false),
      compileError,
      deploys,
    };
  }

  /**
   * Makes the engine directory complete and current: every active org's files, the gateway, the
   * top-level include files; org directories of orgs that are gone or not active are removed.
   * Only what differs is written and reloaded (nothing, on a restart with no change).
   */
  async deployEverything(trigger = "startup"): Promise<StartupSummary> {
    const started = performance.now();
    // Realtime PJSIP: rows first, so every endpoint the files' dialplan dials is served.
    await this.options.pjsipRows?.syncEverything();
    const orgs = await this.builds.orgs();
    const served = orgs.filter((org) => isServed(org.status));
    const servedUnits = new Set(served.map((org) => unitId(orgUnit(org.context_prefix))));
    const stale = (await this.deployer.unitsOnDisk()).filter(
      (unit) => unit.kind === "org" && !servedUnits.has(unitId(unit)),
    );
    const size = Math.max(1, this.options.startupBatchSize ?? 100);
    const gateway: DeployUnit = { kind: "gateway" };
    const top: DeployUnit = { kind: "top" };
    const units = [...served.map((org) => orgUnit(org.context_prefix)), ...stale, gateway, top];
    // Compiled and written a batch at a time (memory), reloaded once for every org: one PJSIP,
    // dialplan and queue reload for the whole start-up, not one per batch (Deployer.deployInBatches).
    const batches = async function* (this: StoreDeploys): AsyncGenerator<UnitFiles[]> {
      for (let from = 0; from === 0 || from < served.length; from += size) {
        const groups: UnitFiles[] = [];
        for (const org of served.slice(from, from + size)) {
          const files = await this.orgFilesOrRecord(org, trigger);
          if (files) groups.push({ unit: orgUnit(org.context_prefix), files });
        }
        if (from + size >= served.length) {
          // The last batch: org directories no longer served are removed, and the gateway and
          // the include files go last, so each is written after every org file it names (the
          // include guard keeps the include files to what is on disk).
          groups.push(...stale.map((unit) => ({ unit, files: [] })));
          try {
            groups.push({ unit: gateway, files: (await this.builds.gateway()).files });
          } catch (error) {
            await this.recordFailure("gateway", trigger, error as Error);
          }
          groups.push({ unit: top, files: await this.builds.topLevelFiles() });
        }
        yield groups;
      }
    };
    const records = await this.deployer.deployInBatches(units, batches.call(this), { trigger });
    // Copies of orgs that left this node while no deploy of theirs ran here (a replica died).
    await this.options.media
      ?.pruneExcept(new Set(served.map((org) => org.id)))
      .catch((error: unknown) => this.options.onError?.("media", error as Error));
    return {
      units: records.length,
      changed: records.filter((r) => r.result !== "unchanged"),
      failed: records.filter((r) => r.result === "failed"),
      durationMs: Math.round(performance.now() - started),
    };
  }

  /** Stops taking work; with `flush` (default) pending deploys run first. Resolves when idle. */
  async stop(options: { flush?: boolean } = {}): Promise<void> {
    await this.scheduler.stop(options);
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.scheduler.idle();
  }

  private async buildOrg(orgId: string, trigger: string) {
    await this.options.onBuildStart?.(orgId);
    try {
      const build = await this.builds.orgBuild(orgId);
      await this.options.media?.syncOrg(orgId);
      return build;
    } catch (error) {
      this.buildErrors.set(orgId, error as Error);
      const handle = await this.builds.org(orgId).catch(() => null);
      if (handle) {
        await this.recordFailure(unitId(orgUnit(handle.context_prefix)), trigger, error as Error);
      }
      throw error;
    }
  }

  private async orgFilesOrRecord(
    org: OrgHandleRecord,
    trigger: string,
  ): Promise<CompiledFile[] | null> {
    try {
      const { files } = await this.builds.orgFiles(org.id);
      await this.options.media?.syncOrg(org.id);
      return files;
    } catch (error) {
      await this.recordFailure(unitId(orgUnit(org.context_prefix)), trigger, error as Error);
      this.options.onError?.(org.id, error as Error);
      return null;
    }
  }

  /** Records a deploy that failed before anything was written (the build or compile failed). */
  private async recordFailure(unit: string, trigger: string, error: Error): Promise<void> {
    const applied = await this.deployer.log.applied(unit).catch(() => null);
    await this.deployer.log
      .record({
        id: randomUUID(),
        unit,
        revision: "",
        previousRevision: applied?.revision ?? null,
        trigger,
        startedAt: this.deployer.clock().toISOString(),
        durationMs: 0,
        result: "failed",
        filesWritten: [],
        filesRemoved: [],
        reloads: [],
        error: error.message,
      })
      .catch(() => {});
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.then(
      () => this.inFlight.delete(work),
      () => this.inFlight.delete(work),
    );
    return work;
  }
}
