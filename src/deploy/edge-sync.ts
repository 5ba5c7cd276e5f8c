// The SIP edge kept in step with the store while `serve` runs (issue 26, docs/beyond-one-machine.md
// "The SIP edge"). Every change that moves routing records an edge request in its own transaction
// (src/store/edge-sync-repository.ts: an org's config through the deploy scheduler's
// `recordDeploy`, nodes and placements in their repository writes); the replica holding the
// `edge-sync` lease follows them like the deployer follows deploy requests:
// - its own replica's saves are scheduled at once, the others' through a poll of the requests;
// - pushes are debounced (a burst of saves is one push, never later than `maxDelayMs` after the
//   first), one at a time, and each is the whole table set (applyEdgeTables sends only the
//   entries that differ, then reads everything back);
// - a push that fails (edge down, read-back differs) is retried with backoff; its requests stay
//   pending in the store, so a successor that takes the lease pushes them too. A reload Kamailio
//   refuses as rate-limited is not a failure: the push waits it out (src/deploy/edge-reload.ts,
//   on these timers, the lease checked again before the retry) and stops waiting when stopped;
// - the lease is checked right before a push (`fence`), so a holder paused past its expiry does
//   not push over its successor.
// Org states are cached between pushes and reloaded only for orgs whose requests came in; the
// nodes and placements (two small queries) are read on every push.
import { type Clock, systemClock, systemTimers, type TimerHandle, type Timers } from "../clock.js";
import {
  buildEdgeTables,
  type Diagnostic,
  edgeStateFromOrgs,
  printEdgeData,
} from "../compiler/edge/index.js";
import type { EdgeSettings } from "../config.js";
import type { OrgState } from "../model/org-state.js";
import type { Db } from "../store/database.js";
import {
  createEdgeSyncRepository,
  type EdgeRequest,
  NODES_SCOPE,
  requestEdgePush,
} from "../store/edge-sync-repository.js";
import { loadOrgState } from "../store/load-org-state.js";
import { createOrganizationRepository, isServed } from "../store/organization-repository.js";
import { applyEdgeTables, type EdgeRpc, httpEdgeRpc } from "./edge-apply.js";
import { type EdgeSharedMemory, readEdgeSharedMemory } from "./edge-memory.js";
import { loadEdgeRouting } from "./edge-routing.js";
import { revisionOf } from "./revision.js";

/** The lease of the one replica that pushes to the edge. */
export const EDGE_SYNC_ROLE = "edge-sync";
export const EDGE_DEBOUNCE_MS = 800;
export const EDGE_MAX_DELAY_MS = 5000;
export const EDGE_POLL_MS = 250;
export const EDGE_RETRY_MS = { initial: 1000, max: 30_000 };

export interface EdgeSyncLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface EdgeSyncOptions {
  db: Db;
  edge: EdgeSettings;
  /** Default: JSON-RPC over HTTP to 127.0.0.1:<edge.rpcPort>/RPC. */
  rpc?: EdgeRpc;
  /** Throws unless this replica still holds the edge-sync lease (ReplicaRoles.assertHolds). */
  fence?: () => Promise<void>;
  clock?: Clock;
  timers?: Timers;
  debounceMs?: number;
  maxDelayMs?: number;
  pollMs?: number;
  retryMs?: { initial: number; max: number };
  logger?: EdgeSyncLogger;
}

/** What the last push did. */
export interface EdgePushOutcome {
  ok: boolean;
  revision: string | null;
  error: string | null;
}

/** The listen part buildEdgeTables reads: the tables never depend on the edge's own address. */
function tableListen(edge: EdgeSettings) {
  return {
    sip_address: "0.0.0.0",
    sip_port: 5060,
    rpc_port: edge.rpcPort,
    data_dir: edge.dir,
    probe_interval: 10,
  };
}

/** The tables the store routes to now, compiled from the org states given; and their revision. */
export async function compileStoreEdgeTables(
  db: Db,
  edge: EdgeSettings,
  states: Iterable<OrgState>,
): Promise<{ tables: ReturnType<typeof buildEdgeTables>; revision: string; errors: Diagnostic[] }> {
  const { nodes, placements } = await loadEdgeRouting(db);
  const state = edgeStateFromOrgs([...states], placements, nodes, tableListen(edge), edge.carriers);
  const diagnostics: Diagnostic[] = [];
  const tables = buildEdgeTables(state, diagnostics);
  return {
    tables,
    revision: revisionOf(printEdgeData(tables)),
    errors: diagnostics.filter((d) => d.severity === "error"),
  };
}

/** Every served org's state, by id. */
export async function servedOrgStates(db: Db): Promise<Map<string, OrgState>> {
  const states = new Map<string, OrgState>();
  for (const org of await createOrganizationRepository(db).listHandles()) {
    if (isServed(org.status)) states.set(org.id, await loadOrgState(db, org.id));
  }
  return states;
}

/** Pushes the store's routing to one edge while this replica holds the edge-sync lease. */
export class EdgeSync {
  private readonly requests;
  private readonly rpc: EdgeRpc;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly debounceMs: number;
  private readonly maxDelayMs: number;
  private readonly pollMs: number;
  private readonly retryMs: { initial: number; max: number };
  private running = false;
  /** Served orgs' states as of their last request; null until the first push loads them all. */
  private states: Map<string, OrgState> | null = null;
  /** Orgs whose state must be read again before the next push. */
  private readonly stale = new Set<string>();
  /** Highest request seq per scope already scheduled. */
  private readonly seen = new Map<string, number>();
  private pushTimer: TimerHandle | null = null;
  private pollTimer: TimerHandle | null = null;
  /** Monotonic time of the first change the next push covers; null: nothing waits. */
  private firstChangeAt: number | null = null;
  private pushing: Promise<void> | null = null;
  /** Aborts the running push's wait for a rate-limited reload (stop). */
  private pushAbort: AbortController | null = null;
  private again = false;
  private failures = 0;
  private lastOutcome: EdgePushOutcome | null = null;

  constructor(private readonly options: EdgeSyncOptions) {
    this.requests = createEdgeSyncRepository(options.db);
    this.rpc = options.rpc ?? httpEdgeRpc(`http://127.0.0.1:${options.edge.rpcPort}/RPC`);
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.debounceMs = options.debounceMs ?? EDGE_DEBOUNCE_MS;
    this.maxDelayMs = options.maxDelayMs ?? EDGE_MAX_DELAY_MS;
    this.pollMs = options.pollMs ?? EDGE_POLL_MS;
    this.retryMs = options.retryMs ?? EDGE_RETRY_MS;
  }

  /** True while this replica holds the lease and pushes. */
  get active(): boolean {
    return this.running;
  }

  /** The last push's outcome (tests, logs); null before the first. */
  get outcome(): EdgePushOutcome | null {
    return this.lastOutcome;
  }

  /**
   * The edge's shared memory now, for the metrics (read by every replica with the edge, lease
   * or not: it is the edge's figure, not the push's); null when the edge does not answer.
   */
  async sharedMemory(): Promise<EdgeSharedMemory | null> {
    return readEdgeSharedMemory(this.rpc).catch(() => null);
  }

  /**
   * Records through `db` (a save's transaction) that `orgId`'s routing may have changed: the
   * deploy scheduler's `recordDeploy` calls this beside its own request.
   */
  async recordOrgChange(db: Db, orgId: string): Promise<void> {
    await requestEdgePush(db, orgId);
  }

  /** After this replica's own save committed: push soon (no poll delay) when pushing here. */
  orgChanged(orgId: string): void {
    if (!this.running) return;
    this.stale.add(orgId);
    this.schedule(this.debounceMs);
  }

  /** This replica took the lease: everything is read afresh and pushed, then requests followed. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.states = null;
    this.stale.clear();
    this.seen.clear();
    this.failures = 0;
    this.schedule(0);
    this.armPoll();
  }

  /** Lost the lease, or stopping: no new push; resolves once a running one has ended. */
  async stop(): Promise<void> {
    this.running = false;
    this.pushTimer?.cancel();
    this.pushTimer = null;
    this.pollTimer?.cancel();
    this.pollTimer = null;
    this.firstChangeAt = null;
    this.pushAbort?.abort(new Error("the edge sync stopped"));
    await this.pushing;
  }

  /** Resolves once no push is running (a waiting one is not started). */
  async idle(): Promise<void> {
    while (this.pushing) await this.pushing;
  }

  /** One look at the requests: scopes changed by other replicas (or never pushed) are scheduled. */
  async poll(): Promise<void> {
    if (!this.running) return;
    try {
      let changed = false;
      for (const request of await this.requests.pending()) {
        if (request.seq <= (this.seen.get(request.scope) ?? 0)) continue;
        this.seen.set(request.scope, request.seq);
        if (request.scope !== NODES_SCOPE) this.stale.add(request.scope);
        changed = true;
      }
      if (changed) this.schedule(this.debounceMs);
    } catch (error) {
      this.options.logger?.error({ err: error }, "reading edge requests failed");
    }
  }

  private armPoll(): void {
    if (!this.running) return;
    this.pollTimer = this.timers.setTimer(
      this.pollMs,
      () => {
        this.pollTimer = null;
        void this.poll().finally(() => this.armPoll());
      },
      { background: true },
    );
  }

  /** A push `delayMs` from now, but never later than maxDelayMs after the first waiting change. */
  private schedule(delayMs: number): void {
    if (!this.running) return;
    if (this.pushing) {
      this.again = true;
      return;
    }
    const now = this.timers.now();
    this.firstChangeAt ??= now;
    const latest = this.firstChangeAt + this.maxDelayMs - now;
    this.pushTimer?.cancel();
    this.pushTimer = this.timers.setTimer(Math.max(0, Math.min(delayMs, latest)), () => {
      this.pushTimer = null;
      this.startPush();
    });
  }

  private startPush(): void {
    if (this.pushing || !this.running) return;
    this.firstChangeAt = null;
    this.pushing = this.push().finally(() => {
      this.pushing = null;
      if (this.again && this.running) {
        this.again = false;
        this.schedule(this.debounceMs);
      }
    });
  }

  private async push(): Promise<void> {
    const edge = this.options.edge.dir;
    let covering: EdgeRequest[] = [];
    try {
      // The requests this push covers are read before the store is: a change committed after
      // this read is pushed again.
      covering = await this.requests.pending();
      for (const request of covering) {
        const seen = this.seen.get(request.scope) ?? 0;
        if (request.seq > seen) this.seen.set(request.scope, request.seq);
        if (request.scope !== NODES_SCOPE) this.stale.add(request.scope);
      }
      await this.refreshStates();
      const { tables, revision, errors } = await compileStoreEdgeTables(
        this.options.db,
        this.options.edge,
        this.states!.values(),
      );
      if (errors.length > 0) {
        // Nothing a retry would fix: the next change that moves routing tries again.
        const message = `the edge compiler refused the store's routing: ${errors.map((d) => `${d.path}: ${d.message}`).join("; ")}`;
        await this.failed(edge, message, false);
        return;
      }
      await this.options.fence?.();
      this.pushAbort = new AbortController();
      const result = await applyEdgeTables(this.rpc, edge, tables, {
        timers: this.timers,
        signal: this.pushAbort.signal,
        beforeRetry: this.options.fence,
        onWait: ({ method, ms, retry }) =>
          this.options.logger?.info(
            { edge, method, waitMs: ms, retry },
            "edge reload refused as too soon after the last one: retrying once Kamailio allows it",
          ),
      });
      await this.requests.applied(edge, revision, this.clock().toISOString());
      await this.requests.done(covering);
      this.failures = 0;
      this.lastOutcome = { ok: true, revision, error: null };
      this.options.logger?.info({ edge, revision, ...result }, "edge tables applied");
    } catch (error) {
      if (!this.running) return;
      await this.failed(edge, (error as Error).message, true);
    } finally {
      this.pushAbort = null;
    }
  }

  /** Reads every served org the first time, then only the stale ones. */
  private async refreshStates(): Promise<void> {
    const db = this.options.db;
    if (this.states === null) {
      this.stale.clear();
      this.states = await servedOrgStates(db);
      return;
    }
    const orgs = createOrganizationRepository(db);
    for (const orgId of [...this.stale]) {
      const handle = await orgs.findHandle(orgId);
      if (handle && isServed(handle.status)) this.states.set(orgId, await loadOrgState(db, orgId));
      else this.states.delete(orgId);
      this.stale.delete(orgId);
    }
  }

  private async failed(edge: string, message: string, retry: boolean): Promise<void> {
    this.lastOutcome = { ok: false, revision: null, error: message };
    this.options.logger?.warn({ edge, err: message }, "edge push failed");
    try {
      await this.requests.failed(edge, message, this.clock().toISOString());
    } catch (error) {
      this.options.logger?.error({ err: error }, "recording the edge push's failure failed");
    }
    if (!retry || !this.running) return;
    this.failures += 1;
    const delay = Math.min(this.retryMs.max, this.retryMs.initial * 2 ** (this.failures - 1));
    this.again = false;
    this.pushTimer?.cancel();
    this.firstChangeAt = this.timers.now();
    this.pushTimer = this.timers.setTimer(delay, () => {
      this.pushTimer = null;
      this.startPush();
    });
  }
}

/** A deploy scheduler (the domain's port) that also records, and pushes, the org's edge change. */
export interface OrgChangeScheduler {
  recordDeploy(db: Db, orgId: string): Promise<void>;
  scheduleDeploy(orgId: string): void;
}

/**
 * `scheduler` with the edge beside it: every org config save (DIDs, trunks, status: what the edge
 * routes by) records an edge request in the save's transaction, and once committed is pushed by
 * this replica when it holds the edge-sync lease (else the holder's poll finds it).
 */
export function alsoToEdge<S extends OrgChangeScheduler>(
  scheduler: S,
  sync: EdgeSync,
): OrgChangeScheduler {
  return {
    async recordDeploy(db, orgId) {
      await scheduler.recordDeploy(db, orgId);
      await sync.recordOrgChange(db, orgId);
    },
    scheduleDeploy(orgId) {
      scheduler.scheduleDeploy(orgId);
      sync.orgChanged(orgId);
    },
  };
}

/** `pbxctl status`'s edge section: what the store routes to now against what the edge took. */
export interface EdgeStatus {
  edge: string;
  /** Revision of the tables the store compiles to now; null when the compiler refuses them. */
  wantedRevision: string | null;
  appliedRevision: string | null;
  appliedAt: string | null;
  /** The last push's failure, or why the tables do not compile. */
  error: string | null;
  attemptedAt: string | null;
  /** Changes recorded and not yet pushed (scopes: org ids, `nodes`). */
  pendingChanges: number;
  state: "OK" | "PENDING" | "FAILED";
}

export async function edgeStatus(db: Db, edge: EdgeSettings): Promise<EdgeStatus> {
  const repository = createEdgeSyncRepository(db);
  const compiled = await compileStoreEdgeTables(db, edge, (await servedOrgStates(db)).values());
  const refused =
    compiled.errors.length > 0
      ? `the edge compiler refuses the store's routing: ${compiled.errors.map((d) => `${d.path}: ${d.message}`).join("; ")}`
      : null;
  const applied = await repository.status(edge.dir);
  const wantedRevision = refused ? null : compiled.revision;
  const error = refused ?? applied?.error ?? null;
  const upToDate = wantedRevision !== null && applied?.revision === wantedRevision;
  return {
    edge: edge.dir,
    wantedRevision,
    appliedRevision: applied?.revision ?? null,
    appliedAt: applied?.appliedAt ?? null,
    error,
    attemptedAt: applied?.attemptedAt ?? null,
    pendingChanges: (await repository.pending()).length,
    state: upToDate ? "OK" : error ? "FAILED" : "PENDING",
  };
}
