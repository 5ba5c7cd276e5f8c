// Realtime PJSIP in the deployer (PBX_PJSIP=realtime, issue 24). The compiler stays the one source
// of the rows: after a save commits, the org's rows are compiled (`compileOrgPjsipRealtime`),
// diffed against the `ps_*` tables and the differences written in one transaction, which also
// queues each changed object for the engine (`pjsip_realtime_pending`). Then the engine is told:
// each changed endpoint, auth and AOR is expired from Asterisk's memory cache
// (`SorceryMemoryCacheExpireObject`), so its next lookup reads the new row; a changed trunk
// registration reloads res_pjsip_outbound_registration only; the endpoints are verified with
// `pjsip show endpoint <id>` (present when it has a row, gone when not). Only then are the
// queued objects forgotten, so an engine that is down, or a deployer that dies, leaves them in
// the store: the next flush (a retry with backoff, the next save, or the next deployer's start)
// converges. None of this waits for the files' debounce: a new user is registrable as soon as
// its rows are written and its (uncached) id is looked up; the dialplan and queues still deploy
// through the debounced file path. A caller that must know the rows are written and the engine
// told (a test about to register a phone, a bench between samples) awaits `settled()`, which
// waits through the retries; `idle()` only waits for what runs now.
import type { Logger } from "pino";
import { BackgroundTimer, type Clock, systemClock, systemTimers, type Timers } from "../clock.js";
import { REGISTRATIONS_RELOAD } from "../engine/realtime-pjsip-target.js";
import type { EngineProbe, EngineTarget } from "../engine/target.js";
import type { Db } from "../store/database.js";
import { ensureNodeRealtimeViews } from "../store/node-realtime-views.js";
import { createOrganizationRepository } from "../store/organization-repository.js";
import {
  createPjsipRealtimeRepository,
  type PendingPjsipObject,
  type PjsipRealtimeRepository,
  type PjsipRowChange,
} from "../store/pjsip-realtime-repository.js";
import { type RealtimeOrgPending, realtimeOrgPending } from "./realtime-status.js";
import type { ReloadQueue } from "./reload-queue.js";
import type { StoreBuilds } from "./store-builds.js";

/** Waits before telling the engine again after a failure, one per consecutive failure. */
export const REALTIME_RETRY_DELAYS_MS = [1000, 2000, 5000, 10_000, 30_000] as const;

/** The reload-queue unit realtime PJSIP's reloads are recorded under. */
export const REALTIME_UNIT = "pjsip-realtime";

export interface RealtimePjsipOptions {
  db: Db;
  builds: Pick<StoreBuilds, "orgPjsipRows">;
  target: EngineTarget;
  /** The deployer's reload queue: a registrations reload never runs beside another reload. */
  reloads: ReloadQueue;
  clock?: Clock;
  timers?: Timers;
  logger?: Logger;
  retryDelaysMs?: readonly number[];
  /**
   * The engine node this side tells (issue 25): its Asterisk reads the rows of its orgs only,
   * through its own views (src/store/node-realtime-views.ts), and it takes only the changes
   * queued for it. Absent: the one implicit engine, which reads the tables themselves.
   */
  node?: { id: string; name: string };
  /** Told each step of a save's path as it happens (bench:engine --trace-registrable). */
  trace?: RealtimeTrace;
  /** The store's realtime rows and pending queue; default the repository over `db`. */
  rows?: RealtimeRows;
}

/** The part of the realtime repository this side uses (a test gives a failing fake). */
export type RealtimeRows = Pick<
  PjsipRealtimeRepository,
  | "replaceOrgRows"
  | "removeRowsOutside"
  | "pending"
  | "acknowledge"
  | "queueOrgForNode"
  | "existing"
  | "unwrittenRows"
>;

/** What failures left to a scheduled retry (`RealtimePjsip.owed()`). */
export interface RealtimeOwed {
  /** Orgs whose rows a sync could not write: the store has rows older than the org's save. */
  unwrittenOrgs: string[];
  /** The last flush failed: the engine has not taken what is queued for it. */
  engineOwed: boolean;
}

/**
 * The steps of a save's realtime path, in order: the sync started (after the save committed),
 * the org's PJSIP state loaded and compiled, its current rows read, the changed rows committed;
 * then, in the flush that tells the engine, the cache expiries sent and the endpoints verified.
 */
export type RealtimeStep = "sync" | "compiled" | "read" | "committed" | "expired" | "verified";

/** Called at each step, with the org (a flush's steps name every org it told). */
export type RealtimeTrace = (step: RealtimeStep, orgIds: readonly string[]) => void;

/** What one flush told the engine. */
export interface RealtimeFlush {
  /** Objects the engine took (expired, or not cached: nothing stale to drop). */
  told: number;
  /** Still queued afterwards (a later change, or a failure). */
  error?: string;
}

/** Writes orgs' realtime PJSIP rows and tells the engine; implements the save hook of StoreDeploys. */
export class RealtimePjsip {
  private readonly rows: RealtimeRows;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly retryDelaysMs: readonly number[];
  /** Per org: the rows write running now, and the one queued behind it (saves coalesce into it). */
  private readonly running = new Map<string, Promise<number>>();
  private readonly queued = new Map<string, { written: Promise<number>; told: Promise<void> }>();
  /** Syncs whose rows are written and whose engine flush is still running. */
  private readonly telling = new Set<Promise<void>>();
  private flushing: Promise<RealtimeFlush> | null = null;
  private flushAgain: Promise<RealtimeFlush> | null = null;
  private readonly retry: BackgroundTimer;
  /**
   * Orgs whose rows a sync failed to write (the store was unreachable), with the write's error:
   * synced again on retry.
   */
  private readonly unsynced = new Map<string, string>();
  /**
   * The last flush failed: what it was to tell the engine is owed until a flush succeeds. `orgs`:
   * the orgs it was to tell, null when it could not even read what is queued (any org may be owed).
   */
  private flushFailure: { error: string; orgs: ReadonlySet<string> | null } | null = null;
  /** The retry running now (its syncs, then its flush). */
  private retrying: Promise<void> | null = null;
  /** Waiters of `settled()`, woken when a retry's run ends (or on stop). */
  private readonly retryEnded = new Set<() => void>();
  private failures = 0;
  private stopped = false;

  constructor(private readonly options: RealtimePjsipOptions) {
    this.rows = options.rows ?? createPjsipRealtimeRepository(options.db);
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.retryDelaysMs = options.retryDelaysMs ?? REALTIME_RETRY_DELAYS_MS;
    this.retry = new BackgroundTimer(this.timers);
  }

  /**
   * Makes the org's rows what the store compiles to now and tells the engine; resolves when
   * done. Never throws (failures are logged; what the engine was not told stays queued). Rows
   * writes of one org run one at a time; saves arriving meanwhile share the next one. Telling
   * the engine (the cache expiries and the verification, serialized by `flush`) is outside that
   * chain: measured by bench:engine, a save waiting for the previous save's verification was
   * most of a new user's time to registrable when saves came in a row.
   */
  sync(orgId: string): Promise<void> {
    const waiting = this.queued.get(orgId);
    if (waiting) return waiting.told;
    const previous = this.running.get(orgId) ?? Promise.resolve(0);
    const written: Promise<number> = previous.then(async () => {
      this.queued.delete(orgId);
      this.running.set(orgId, written);
      try {
        if (this.stopped) return 0;
        this.options.trace?.("sync", [orgId]);
        const changes = (await this.replace(orgId)).length;
        this.options.trace?.("committed", [orgId]);
        this.unsynced.delete(orgId);
        return changes;
      } catch (error) {
        // The save is committed and its rows are not: a deleted user's rows would stay
        // readable (and registrable) until the org's next save. Retried with the flushes.
        this.unsynced.set(orgId, (error as Error).message);
        this.options.logger?.error(
          { org_id: orgId, err: (error as Error).message },
          "realtime PJSIP rows not written; retrying",
        );
        this.scheduleRetry();
        return 0;
      } finally {
        if (this.running.get(orgId) === written) this.running.delete(orgId);
      }
    });
    const told = written.then(async (changes) => {
      if (changes === 0) return;
      try {
        await this.flush();
      } catch (error) {
        this.options.logger?.error(
          { org_id: orgId, err: (error as Error).message },
          "realtime PJSIP changes not told to the engine",
        );
      }
    });
    this.telling.add(told);
    void told.finally(() => this.telling.delete(told));
    this.queued.set(orgId, { written, told });
    return told;
  }

  /**
   * Every org's rows as the store compiles them now, the rows of orgs that are gone removed,
   * then the engine told everything queued (the start-up deploy, or a new deployer taking over).
   */
  async syncEverything(): Promise<{ orgs: number; changes: number }> {
    // A node's views are made current first (a node copied in from another store has none; a
    // column added to a table since reaches them).
    if (this.options.node) await ensureNodeRealtimeViews(this.options.db, this.options.node);
    const handles = await createOrganizationRepository(this.options.db).listHandles();
    let changes = 0;
    for (const handle of handles) {
      try {
        changes += (await this.replace(handle.id, { queueAdded: false })).length;
      } catch (error) {
        this.options.logger?.error(
          { org_id: handle.id, err: (error as Error).message },
          "realtime PJSIP rows not written",
        );
      }
    }
    const prefixes = handles.map((handle) => handle.context_prefix);
    changes += (await this.rows.removeRowsOutside(prefixes, this.now())).length;
    await this.flush();
    return { orgs: handles.length, changes };
  }

  /** Tells the engine what is queued (one flush at a time; a call meanwhile gets the next one). */
  flush(): Promise<RealtimeFlush> {
    if (this.flushing) {
      this.flushAgain ??= this.flushing.then(() => {
        this.flushAgain = null;
        return this.flush();
      });
      return this.flushAgain;
    }
    const run = this.flushOnce().finally(() => {
      this.flushing = null;
    });
    this.flushing = run;
    return run;
  }

  /** The objects this engine has not taken yet (all orgs', or one org's). */
  pending(orgId?: string): Promise<PendingPjsipObject[]> {
    return this.rows.pending({ nodeId: this.engineId, ...(orgId === undefined ? {} : { orgId }) });
  }

  /**
   * What the org is owed now, by any engine holding it (`GET /config/status`): its rows not
   * written as compiled, and its changes not taken. Read from the store, so any replica answers
   * the same.
   */
  orgPending(orgId: string): Promise<RealtimeOrgPending> {
    return realtimeOrgPending({ builds: this.options.builds, rows: this.rows }, orgId);
  }

  /**
   * The org reached or left this side's node (a pin, a standby, a move): the node's views show
   * its rows or stop showing them in the transaction that changed the placement, so every
   * object of the org is queued for this node and the engine told. Leaving, the expiries drop
   * what the node's memory cache still holds of the org (its verification then expects the
   * endpoints gone); reaching, its trunks' registrations are loaded. Never throws.
   */
  async placementChanged(orgId: string): Promise<void> {
    if (!this.options.node) return;
    try {
      const queued = await this.rows.queueOrgForNode(orgId, this.options.node.id, this.now());
      if (queued > 0) await this.flush();
    } catch (error) {
      this.options.logger?.error(
        { org_id: orgId, err: (error as Error).message },
        "realtime PJSIP objects of a moved org not queued",
      );
    }
  }

  /**
   * Resolves once no sync, flush or retry is running or queued: what was asked so far has been
   * attempted. A retry scheduled after a failure is not waited for (the store may stay down for
   * long, and a test may want to see the failure): `owed()` says whether one is owed, and
   * `settled()` waits for it.
   */
  async idle(): Promise<void> {
    for (;;) {
      const busy: Promise<unknown>[] = [...this.running.values(), ...this.telling];
      if (this.flushing) busy.push(this.flushing.then(() => {}));
      if (this.flushAgain) busy.push(this.flushAgain.then(() => {}));
      if (this.retrying) busy.push(this.retrying);
      if (busy.length === 0) return;
      await Promise.allSettled(busy);
    }
  }

  /** What failures left to a scheduled retry, or null when nothing is owed. */
  owed(): RealtimeOwed | null {
    if (this.unsynced.size === 0 && this.flushFailure === null) return null;
    return { unwrittenOrgs: [...this.unsynced.keys()], engineOwed: this.flushFailure !== null };
  }

  /**
   * An on-request deploy's sync (`POST /config/deploy`, `pbxctl apply`): the org's rows written
   * and the engine told as `sync` does (what an earlier failed flush left of the org is told
   * again now, not only at the next retry), then what of the org is still owed, in words, or
   * null when nothing is. A failure is retried in the background as after a save; the caller
   * reports it instead of `ok`, since `sync` itself never throws.
   */
  async syncOnRequest(orgId: string): Promise<string | null> {
    await this.sync(orgId);
    if (!this.unsynced.has(orgId) && this.engineOwes(orgId)) await this.flush();
    const unwritten = this.unsynced.get(orgId);
    if (unwritten !== undefined) return `rows not written: ${unwritten}`;
    if (this.engineOwes(orgId)) {
      return `changes not taken by the engine yet: ${this.flushFailure!.error}`;
    }
    return null;
  }

  /**
   * Resolves once nothing is running, queued or owed: every save's rows written and the engine
   * told. Unlike `idle()`, a retry scheduled after a failure (a database restart, AMI down) is
   * waited for, and the next, as the injected timers run them. Rejects, naming what is owed,
   * once `withinMs` of those timers have passed or this side is stopped: a store that stays
   * down never hangs the caller.
   */
  async settled(options: { withinMs: number }): Promise<void> {
    const deadline = this.timers.now() + options.withinMs;
    for (;;) {
      await this.idle();
      const owed = this.owed();
      if (owed === null) return;
      const left = deadline - this.timers.now();
      const retried =
        !this.stopped && this.retry.armed && left > 0 && (await this.retryEndedWithin(left));
      if (!retried) {
        const why = this.stopped ? "stopped" : `not settled within ${options.withinMs / 1000} s`;
        throw new Error(`realtime PJSIP ${why}: ${describeOwed(owed)}`);
      }
    }
  }

  /** Waits for running syncs and flushes; no retry is scheduled afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.retry.cancel();
    this.wakeSettled();
    await Promise.allSettled([...this.running.values(), ...this.telling, this.retrying]);
    await Promise.allSettled([this.flushing, this.flushAgain]);
  }

  /** Whether the last flush failed with objects of the org queued (or unknown ones). */
  private engineOwes(orgId: string): boolean {
    const failure = this.flushFailure;
    return failure !== null && (failure.orgs === null || failure.orgs.has(orgId));
  }

  /** The engine id the pending rows are queued under: the node's, `''` for the implicit one. */
  private get engineId(): string {
    return this.options.node?.id ?? "";
  }

  private now(): string {
    return this.clock().toISOString();
  }

  private async replace(
    orgId: string,
    options: { queueAdded?: boolean } = {},
  ): Promise<PjsipRowChange[]> {
    const built = await this.options.builds.orgPjsipRows(orgId);
    this.options.trace?.("compiled", [orgId]);
    if (built === null) {
      // The org is gone, and its prefix with it: remove every row no org owns.
      const handles = await createOrganizationRepository(this.options.db).listHandles();
      return this.rows.removeRowsOutside(
        handles.map((handle) => handle.context_prefix),
        this.now(),
      );
    }
    return this.rows.replaceOrgRows({
      orgId,
      prefix: built.prefix,
      rows: built.rows,
      at: this.now(),
      ...(this.options.trace ? { onRead: () => this.options.trace?.("read", [orgId]) } : {}),
      ...options,
    });
  }

  private async flushOnce(): Promise<RealtimeFlush> {
    let pending: PendingPjsipObject[];
    try {
      pending = await this.rows.pending({ nodeId: this.engineId });
    } catch (error) {
      // The store is unreachable (a database restart): what is owed stays there; ask again.
      return this.failed(error, null);
    }
    if (pending.length === 0) {
      this.flushFailure = null;
      return { told: 0 };
    }
    const target = this.options.target;
    if (!target.expireCachedObject) {
      // No engine to tell (PBX_ENGINE=none): nothing holds a stale copy of these rows.
      await this.rows.acknowledge(pending);
      this.flushFailure = null;
      return { told: pending.length };
    }
    const told: PendingPjsipObject[] = [];
    // What stays queued when this flush fails: everything, unless some of it was acknowledged.
    let unacknowledged: readonly PendingPjsipObject[] = pending;
    try {
      for (const object of pending) {
        if (object.kind === "registration") continue;
        await target.expireCachedObject(`res_pjsip/${object.kind}`, object.id);
        told.push(object);
      }
      const registrations = pending.filter((object) => object.kind === "registration");
      if (registrations.length > 0) {
        const [outcome] = await this.options.reloads.run(
          [{ module: "pjsip", command: REGISTRATIONS_RELOAD }],
          REALTIME_UNIT,
        );
        if (outcome?.status === "failed") {
          throw new Error(outcome.error ?? `${REGISTRATIONS_RELOAD} failed`);
        }
        told.push(...registrations);
      }
      const orgs = [...new Set(pending.map((object) => object.orgId))];
      this.options.trace?.("expired", orgs);
      const wrong = await this.verifyEndpoints(pending.filter((o) => o.kind === "endpoint"));
      this.options.trace?.("verified", orgs);
      if (wrong.length > 0) {
        const names = wrong.map((p) => `${p.name} ${p.present ? "missing" : "still there"}`);
        const contradicted = new Set(wrong.map((p) => p.name));
        const isContradicted = (o: PendingPjsipObject) =>
          o.kind === "endpoint" && contradicted.has(o.id);
        await this.rows.acknowledge(told.filter((o) => !isContradicted(o)));
        unacknowledged = pending.filter((o) => isContradicted(o) || !told.includes(o));
        throw new Error(
          `the engine does not serve the rows as written: endpoint ${names.join(", ")}`,
        );
      }
      await this.rows.acknowledge(told);
      this.failures = 0;
      this.flushFailure = null;
      return { told: told.length };
    } catch (error) {
      return this.failed(error, unacknowledged);
    }
  }

  private failed(error: unknown, pending: readonly PendingPjsipObject[] | null): RealtimeFlush {
    const message = (error as Error).message;
    this.flushFailure = {
      error: message,
      orgs: pending === null ? null : new Set(pending.map((object) => object.orgId)),
    };
    this.options.logger?.warn(
      { err: message, ...(pending === null ? {} : { pending: pending.length }) },
      "realtime PJSIP changes not taken by the engine yet; retrying",
    );
    this.scheduleRetry();
    return { told: 0, error: message };
  }

  /** A retry: the orgs whose rows were not written are synced again, then what is owed is told. */
  private runRetry(): Promise<void> {
    const run = (async () => {
      for (const orgId of [...this.unsynced.keys()]) await this.sync(orgId);
      await this.flush();
    })().finally(() => {
      if (this.retrying === run) this.retrying = null;
      this.wakeSettled();
    });
    this.retrying = run;
    return run;
  }

  /** Whether a retry's run ends within `ms` of the timers (false: the time ran out first). */
  private retryEndedWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timeout = this.timers.setTimer(
        ms,
        () => {
          this.retryEnded.delete(ended);
          resolve(false);
        },
        { background: true },
      );
      const ended = () => {
        timeout.cancel();
        resolve(true);
      };
      this.retryEnded.add(ended);
    });
  }

  private wakeSettled(): void {
    const waiting = [...this.retryEnded];
    this.retryEnded.clear();
    for (const ended of waiting) ended();
  }

  /** The endpoints' probes the engine contradicts (a row it does not serve, or a removed one it does). */
  private async verifyEndpoints(endpoints: readonly PendingPjsipObject[]): Promise<EngineProbe[]> {
    const target = this.options.target;
    if (endpoints.length === 0 || !target.verify) return [];
    const ids = endpoints.map((object) => object.id);
    const present = await this.rows.existing("ps_endpoints", ids, this.options.node?.name);
    return target.verify(
      ids.map((id) => ({
        kind: "endpoint",
        name: id,
        present: present.has(id),
        path: "ps_endpoints",
      })),
    );
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retry.armed) return;
    const delay =
      this.retryDelaysMs[Math.min(this.failures, this.retryDelaysMs.length - 1)] ?? 1000;
    this.failures++;
    this.retry.arm(delay, () => this.runRetry());
  }
}

/** What is owed, in words: `settled()`'s error. */
function describeOwed(owed: RealtimeOwed): string {
  const parts: string[] = [];
  if (owed.unwrittenOrgs.length > 0) {
    parts.push(`rows of org ${owed.unwrittenOrgs.join(", ")} not written`);
  }
  if (owed.engineOwed) parts.push("changes not taken by the engine yet");
  return parts.join("; ");
}
