// Background deploys after config-mutating saves (SPEC.md §8): the save calls scheduleDeploy and
// returns; the org is compiled and deployed about 800 ms after the last edit of a burst, and at
// most about 5000 ms after its first edit, so a stream of edits cannot postpone it forever. One
// org's deploys never overlap; different orgs deploy independently (their reloads still go
// through the deployer's single queue). A failed deploy is logged and recorded, never thrown at
// the caller, whose request has already been answered; it is retried with backoff (1 s, 2 s,
// 5 s, ... up to a minute) until the engine takes it, so an engine that is down, restarting or
// refusing a reload catches up by itself.

import { systemTimers, type TimerHandle, type Timers } from "../clock.js";
import type { CompiledFile } from "../compiler/types.js";
import { type DeployInstruments, noInstruments } from "../metrics/instruments.js";
import type { DeployRecord } from "./deploy-log.js";
import type { DeployOptions } from "./deployer.js";
import { orgUnit, splitIntoUnits, type UnitFiles, unitId } from "./units.js";

/** What the scheduler deploys for an org: its compiled files, and the DIDs the gateway routes. */
export interface OrgBuild {
  contextPrefix: string;
  /** The org's files (`orgs/<prefix>/**`), plus any other unit's files to deploy with them. */
  files: CompiledFile[];
  /** The org's DID numbers as the gateway routes them; a change regenerates the gateway. */
  dids?: readonly string[];
}

/** Produces an org's build (later: load from the store + compile); null when the org is gone. */
export type OrgBuilder = (orgId: string) => Promise<OrgBuild | null>;

/** The part of the Deployer the scheduler uses. */
export interface UnitDeployer {
  deployUnits(groups: readonly UnitFiles[], options?: DeployOptions): Promise<DeployRecord[]>;
}

export interface DeploySchedulerOptions {
  deployer: UnitDeployer;
  buildOrg: OrgBuilder;
  /** Regenerates and deploys the gateway; called after an org's DIDs changed. */
  regenerateGateway?: () => Promise<unknown>;
  timers?: Timers;
  /** Quiet time after the last edit (default 800 ms). */
  debounceMs?: number;
  /** Longest wait after the first edit of a burst (default 5000 ms). */
  maxDelayMs?: number;
  /** Told about each finished deploy it ran, background or `deployNow` (logs, metrics, requests). */
  onDeployed?: (orgId: string, records: DeployRecord[]) => void;
  /** Told about every failure; the scheduler itself never throws at callers. */
  onError?: (orgId: string, error: Error) => void;
  /** Waits before retrying a failed deploy, one per consecutive failure (the last repeats). */
  retryDelaysMs?: readonly number[];
  /** Save-to-applied latency, failures and retries (src/metrics). */
  instruments?: DeployInstruments;
}

/** Backoff between retries of a failed deploy. */
export const RETRY_DELAYS_MS = [1000, 2000, 5000, 10_000, 30_000, 60_000] as const;

interface Pending {
  firstAt: number;
  timer: TimerHandle;
}

/** Debounced per-org deploys: the `scheduleDeploy` half of the domain's `DeployScheduler` port (SharedDeploys records the requests). */
export class OrgDeployScheduler {
  private readonly pending = new Map<string, Pending>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly lastPrefix = new Map<string, string>();
  private readonly lastDids = new Map<string, string>();
  private readonly timers: Timers;
  private readonly debounceMs: number;
  private readonly maxDelayMs: number;
  private readonly retries = new Map<string, TimerHandle>();
  private readonly failures = new Map<string, number>();
  /** Orgs saved and not yet live, with the time (Timers.now) of the first save not yet live. */
  private readonly owed = new Map<string, number>();
  private readonly instruments: DeployInstruments;
  private gatewayRun: Promise<void> | null = null;
  private gatewayAgain = false;
  private stopped = false;

  constructor(private readonly options: DeploySchedulerOptions) {
    this.timers = options.timers ?? systemTimers;
    this.debounceMs = options.debounceMs ?? 800;
    this.maxDelayMs = options.maxDelayMs ?? 5000;
    this.instruments = options.instruments ?? noInstruments.deploys;
  }

  /** Asks for a deploy of `orgId` soon; returns at once and never throws. */
  scheduleDeploy(orgId: string): void {
    if (this.stopped) {
      this.options.onError?.(orgId, new Error("deploy scheduler stopped; deploy not scheduled"));
      return;
    }
    this.cancelRetry(orgId);
    const now = this.timers.now();
    if (!this.owed.has(orgId)) this.owed.set(orgId, now);
    const existing = this.pending.get(orgId);
    existing?.timer.cancel();
    const firstAt = existing?.firstAt ?? now;
    const delay = Math.max(0, Math.min(this.debounceMs, firstAt + this.maxDelayMs - now));
    this.pending.set(orgId, {
      firstAt,
      timer: this.timers.setTimer(delay, () => this.fire(orgId)),
    });
  }

  /** Deploys `orgId` now (cancelling a pending one) and resolves with the unit records. */
  async deployNow(orgId: string): Promise<DeployRecord[]> {
    this.cancelRetry(orgId);
    this.pending.get(orgId)?.timer.cancel();
    this.pending.delete(orgId);
    let records: DeployRecord[] = [];
    await this.enqueue(orgId, async () => {
      records = await this.runDeploy(orgId);
      // It took the place of the pending deploy it cancelled: what that one would have closed
      // (the shared deploy requests it covers), this one closes.
      this.options.onDeployed?.(orgId, records);
    });
    return records;
  }

  /** Orgs waiting for their debounce timer or for the retry of a failed deploy. */
  get pendingOrgs(): string[] {
    return [...new Set([...this.pending.keys(), ...this.retries.keys()])];
  }

  /** A deploy of the org is waiting (debounce or retry) or running. */
  isBusy(orgId: string): boolean {
    return this.pending.has(orgId) || this.retries.has(orgId) || this.running.has(orgId);
  }

  /**
   * Orgs whose saves the engine does not run yet (scheduled, running, or failed and waiting for
   * a retry), and how long the first of them has waited, in seconds.
   */
  owedDeploys(): { orgs: number; oldestSeconds: number } {
    let oldest = Number.POSITIVE_INFINITY;
    for (const at of this.owed.values()) oldest = Math.min(oldest, at);
    const orgs = this.owed.size;
    return { orgs, oldestSeconds: orgs === 0 ? 0 : (this.timers.now() - oldest) / 1000 };
  }

  /** Consecutive failed deploys of the org (0 once one succeeds). */
  failureCount(orgId: string): number {
    return this.failures.get(orgId) ?? 0;
  }

  /** Resolves once no deploy (nor gateway regeneration) is running. Pending timers are not run. */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.gatewayRun) {
      await Promise.all([...this.running.values(), this.gatewayRun]);
    }
  }

  /**
   * Drops pending and retry timers but keeps taking work (the replica gave the deployer role up:
   * the store's deploy requests keep what was pending for the next holder).
   */
  dropPending(): void {
    for (const orgId of [...this.retries.keys()]) this.cancelRetry(orgId);
    for (const [orgId, pending] of this.pending) {
      pending.timer.cancel();
      this.pending.delete(orgId);
      // No longer this replica's to deploy (its metrics stop counting it as owed).
      if (!this.running.has(orgId)) this.owed.delete(orgId);
    }
  }

  /**
   * Stops taking work. With `flush` (the default) pending deploys run now; otherwise they are
   * dropped. Resolves when everything started has finished (graceful shutdown).
   */
  async stop(options: { flush?: boolean } = {}): Promise<void> {
    this.stopped = true;
    for (const orgId of [...this.retries.keys()]) this.cancelRetry(orgId);
    const orgs = [...this.pending.keys()];
    for (const orgId of orgs) {
      this.pending.get(orgId)!.timer.cancel();
      if (options.flush ?? true) this.fire(orgId);
      else this.pending.delete(orgId);
    }
    await this.idle();
  }

  private fire(orgId: string): void {
    this.pending.delete(orgId);
    void this.enqueue(orgId, async () => {
      const records = await this.runDeploy(orgId);
      this.options.onDeployed?.(orgId, records);
    });
  }

  /** Runs `work` after the org's running deploy, if any; never rejects. */
  private enqueue(orgId: string, work: () => Promise<void>): Promise<void> {
    const previous = this.running.get(orgId) ?? Promise.resolve();
    const run = previous.then(work).catch((error: unknown) => {
      this.instruments.failed();
      this.options.onError?.(orgId, error instanceof Error ? error : new Error(String(error)));
    });
    this.running.set(orgId, run);
    void run.then(() => {
      if (this.running.get(orgId) === run) this.running.delete(orgId);
    });
    return run;
  }

  private async runDeploy(orgId: string): Promise<DeployRecord[]> {
    const build = await this.options.buildOrg(orgId);
    const prefix = build?.contextPrefix ?? this.lastPrefix.get(orgId);
    if (prefix === undefined) return []; // an org never seen and already gone: nothing on disk
    const own = orgUnit(prefix);
    const groups = splitIntoUnits(build?.files ?? []);
    if (!groups.some((group) => unitId(group.unit) === unitId(own))) {
      // The org has no files any more: remove them (with the include files, if given).
      groups.push({ unit: own, files: [] });
    }
    // One batch: the org's files and the include files that name it, then one round of reloads.
    const records = await this.options.deployer.deployUnits(groups, { trigger: "schedule" });
    let failed = false;
    for (const record of records) {
      if (record.result === "failed") {
        failed = true;
        this.options.onError?.(
          orgId,
          new Error(`deploy of ${record.unit} failed: ${record.error}`),
        );
      }
    }
    if (failed) {
      this.instruments.failed();
      this.retryLater(orgId);
    } else {
      this.failures.delete(orgId);
      const savedAt = this.owed.get(orgId);
      if (savedAt !== undefined) {
        this.instruments.applied((this.timers.now() - savedAt) / 1000);
        // A save that came in while this deploy ran is owed by the deploy it scheduled.
        const next = this.pending.get(orgId);
        if (next) this.owed.set(orgId, next.firstAt);
        else this.owed.delete(orgId);
      }
    }
    if (build) this.lastPrefix.set(orgId, build.contextPrefix);
    else this.lastPrefix.delete(orgId);

    const ownRecord = records.find((record) => record.unit === unitId(own));
    const dids = build?.dids ? [...build.dids].sort().join(",") : "";
    const known = this.lastDids.get(orgId);
    const changedFiles =
      ownRecord !== undefined &&
      (ownRecord.filesWritten.length > 0 || ownRecord.filesRemoved.length > 0);
    if (ownRecord && ownRecord.result !== "failed") {
      this.lastDids.set(orgId, dids);
      // Unknown before (first deploy since start): only a real change of the org's files says
      // its DIDs may have moved.
      const didsChanged = known === undefined ? changedFiles : known !== dids;
      if (didsChanged) void this.regenerateGateway(orgId);
    }
    return records;
  }

  /** Schedules another try of a failed deploy after the next backoff delay. */
  private retryLater(orgId: string): void {
    const count = (this.failures.get(orgId) ?? 0) + 1;
    this.failures.set(orgId, count);
    if (this.stopped || this.pending.has(orgId)) return; // a newer edit's deploy comes anyway
    const delays = this.options.retryDelaysMs ?? RETRY_DELAYS_MS;
    const delay = delays[Math.min(count, delays.length) - 1] ?? 60_000;
    this.cancelRetry(orgId);
    this.retries.set(
      orgId,
      this.timers.setTimer(delay, () => {
        this.retries.delete(orgId);
        if (this.stopped) return;
        this.instruments.retried();
        void this.enqueue(orgId, async () => {
          const records = await this.runDeploy(orgId);
          this.options.onDeployed?.(orgId, records);
        });
      }),
    );
  }

  private cancelRetry(orgId: string): void {
    this.retries.get(orgId)?.cancel();
    this.retries.delete(orgId);
  }

  /** One gateway regeneration at a time; requests during a run are coalesced into one more. */
  private regenerateGateway(orgId: string): Promise<void> {
    const regenerate = this.options.regenerateGateway;
    if (!regenerate) return Promise.resolve();
    if (this.gatewayRun) {
      this.gatewayAgain = true;
      return this.gatewayRun;
    }
    const run = async () => {
      do {
        this.gatewayAgain = false;
        try {
          await regenerate();
        } catch (error) {
          this.options.onError?.(orgId, error instanceof Error ? error : new Error(String(error)));
        }
      } while (this.gatewayAgain);
    };
    this.gatewayRun = run().finally(() => {
      this.gatewayRun = null;
    });
    return this.gatewayRun;
  }
}

/** A scheduler for the server: debounced background deploys through `deployer`. */
export function createDeployScheduler(options: DeploySchedulerOptions): OrgDeployScheduler {
  return new OrgDeployScheduler(options);
}
