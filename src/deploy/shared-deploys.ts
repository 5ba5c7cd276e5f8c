// Deploys when several replicas share one store (issue 23). Every replica answers saves; one at a
// time, the holder of the engine's deployer lease, deploys, so reloads stay serialized. A save
// is recorded as a deploy request in the store (src/store/deploy-request-repository.ts) in the
// save's own transaction; the deployer schedules its own replica's saves at once and polls the
// store for the others' (one indexed read of the orgs saved and not yet deployed), feeding both
// into the same debounced scheduler, so SPEC.md §8's rules hold whichever replica a save came
// through. A request is marked done only after a deploy that read the store after it succeeded:
// when the deployer dies, its successor deploys whatever differs (`deployEverything`) and then
// whatever is still requested.
import type { Logger } from "pino";
import { BackgroundTimer, type Clock, systemClock, systemTimers, type Timers } from "../clock.js";
import type { Db } from "../store/database.js";
import { createDeployRequestRepository } from "../store/deploy-request-repository.js";
import { isOnNode } from "../store/engine-node-repository.js";
import type { StartupSummary, StoreDeploys } from "./store-deploys.js";

/** How often the deployer looks for other replicas' saves. */
export const DEPLOY_REQUEST_POLL_MS = 250;

export interface SharedDeploysOptions {
  db: Db;
  replicaId: string;
  clock?: Clock;
  timers?: Timers;
  pollMs?: number;
  logger?: Logger;
  /**
   * The deploys of one engine node (issue 25): only the requests of orgs it holds (as primary or
   * standby) are this deployer's to schedule, and it closes them for this node only (the org's
   * request is done once every node holding it closed it). A deploy it runs for an org held
   * elsewhere (removing the org from this node after a move) covers no request. Absent: every
   * request (the one implicit engine).
   */
  nodeId?: string;
}

/** The domain's DeployScheduler for a replica: a request in the store, deployed by the lease holder. */
export class SharedDeploys {
  private readonly requests;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly pollMs: number;
  private deploys: StoreDeploys | null = null;
  /** Highest request seq per org this deployer has scheduled a deploy for. */
  private readonly seen = new Map<string, number>();
  /** The seq a running deploy of the org covers (read before it read the store). */
  private readonly covering = new Map<string, number>();
  private readonly pollTimer: BackgroundTimer;
  private polling: Promise<void> | null = null;

  constructor(private readonly options: SharedDeploysOptions) {
    this.requests = createDeployRequestRepository(options.db);
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.pollMs = options.pollMs ?? DEPLOY_REQUEST_POLL_MS;
    this.pollTimer = new BackgroundTimer(this.timers);
  }

  /** True while this replica is the deployer. */
  get deploying(): boolean {
    return this.deploys !== null;
  }

  /**
   * Records the save as a deploy request through `db`, the save's own transaction, so it commits
   * with the save: the deployer (this replica, or another) deploys it even if this replica dies
   * right after the commit.
   */
  async recordDeploy(db: Db, orgId: string): Promise<void> {
    await createDeployRequestRepository(db).request(
      orgId,
      this.options.replicaId,
      this.clock().toISOString(),
    );
  }

  /**
   * After the save committed: this replica's own saves go to its scheduler at once (no poll
   * delay), so its debounce starts with the save, as on a single server. Other replicas' saves
   * reach the deployer through its poll of the requests.
   */
  scheduleDeploy(orgId: string): void {
    this.deploys?.scheduleDeploy(orgId);
  }

  /** Whether the store holds a deploy request of the org not done yet. */
  async requested(orgId: string): Promise<boolean> {
    return this.requests.isPending(orgId);
  }

  /** Before a background deploy reads the store: the requests it will cover. */
  async buildStarting(orgId: string): Promise<void> {
    const nodeId = this.options.nodeId;
    if (nodeId !== undefined && !(await isOnNode(this.options.db, orgId, nodeId))) {
      this.covering.delete(orgId);
      return;
    }
    this.covering.set(orgId, await this.requests.seqOf(orgId));
  }

  /** After a background deploy: its requests are done when it succeeded. */
  async deployed(orgId: string, ok: boolean): Promise<void> {
    const seq = this.covering.get(orgId);
    this.covering.delete(orgId);
    if (ok && seq !== undefined && seq > 0) {
      await this.requests.done(orgId, seq, this.options.nodeId);
    }
  }

  /**
   * This replica became the deployer: deploy whatever differs between the store and the engine
   * (what a dead predecessor left, or the start-up deploy), close the requests that covered,
   * then follow new requests.
   */
  async startDeploying(deploys: StoreDeploys, trigger: string): Promise<StartupSummary> {
    // Saves made from now on are scheduled as usual (the deployer's unit locks order them with
    // the deploy below); what was requested before is covered by it.
    this.deploys = deploys;
    const before = await this.requests.pending(this.options.nodeId);
    for (const request of before) this.seen.set(request.orgId, request.seq);
    const summary = await deploys.deployEverything(trigger);
    for (const request of before) {
      await this.requests.done(request.orgId, request.seq, this.options.nodeId);
    }
    this.schedulePoll();
    return summary;
  }

  /** This replica is no longer the deployer: stop polling; pending work stays in the store. */
  async stopDeploying(options: { flush: boolean }): Promise<void> {
    const deploys = this.deploys;
    this.deploys = null;
    this.pollTimer.cancel();
    await this.polling;
    if (!deploys) return;
    if (options.flush) {
      // Shutting down: what is requested and not scheduled yet is deployed too.
      await this.scheduleRequested(deploys).catch((error: unknown) =>
        this.options.logger?.error({ err: error }, "reading deploy requests failed"),
      );
      await deploys.stop({ flush: true });
    } else {
      deploys.scheduler.dropPending();
      await deploys.scheduler.idle();
    }
    this.seen.clear();
  }

  /** One look at the requests: other replicas' saves not yet scheduled are scheduled now. */
  poll(): Promise<void> {
    this.polling ??= (async () => {
      try {
        if (this.deploys) await this.scheduleRequested(this.deploys);
      } catch (error) {
        this.options.logger?.error({ err: error }, "reading deploy requests failed");
      } finally {
        this.polling = null;
        this.schedulePoll();
      }
    })();
    return this.polling;
  }

  private async scheduleRequested(deploys: StoreDeploys): Promise<void> {
    for (const request of await this.requests.pending(this.options.nodeId)) {
      if (request.seq <= (this.seen.get(request.orgId) ?? 0)) continue;
      // This replica's own saves were scheduled when they were made: while that deploy is
      // waiting or running, it covers them (looked at again afterwards, in case a save came in
      // too late for it).
      const own = request.requestedBy === this.options.replicaId;
      if (own && deploys.scheduler.isBusy(request.orgId)) continue;
      this.seen.set(request.orgId, request.seq);
      deploys.scheduleDeploy(request.orgId);
    }
  }

  private schedulePoll(): void {
    if (this.deploys) this.pollTimer.arm(this.pollMs, () => this.poll());
  }
}
