// On-request deploys when several replicas share one store (issue 23): `POST /config/deploy`,
// `/config/reload`, `/organizations/{id}/regenerate` and `/admin/regenerate-gateway` must not
// reload beside the deployer, so they are carried out by the holder of the deployer lease. On
// that replica they run at once, as on a single server; on any other one the request becomes a
// job in the store (src/store/deploy-job-repository.ts) that the deployer polls, carries out with
// its own deploys (one reload at a time, fenced) and answers in the row; the requesting replica
// waits for that answer, at most `waitMs`, and answers the HTTP request with it exactly as the
// deployer would have. Status reads (`GET /config/status`) need no deployer and run anywhere.
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { BackgroundTimer, type Clock, systemClock, systemTimers, type Timers } from "../clock.js";
import type { Db } from "../store/database.js";
import { createDeployJobRepository, type DeployJob } from "../store/deploy-job-repository.js";
import { CompileRefusedError } from "./store-builds.js";
import {
  type GatewayOutcome,
  type OrgDeployOutcome,
  type OrgStatus,
  type ReloadResult,
  type StoreDeploys,
  UnknownOrgError,
} from "./store-deploys.js";

/** How long a replica waits for the deployer to carry a request out. */
export const DEPLOY_JOB_WAIT_MS = 60_000;
/** How often the deployer looks for jobs, and a waiting replica for its job's answer. */
export const DEPLOY_JOB_POLL_MS = 100;
/** Answers nobody came back for (their replica died while waiting) are dropped after this. */
const ABANDONED_AFTER_MS = 10 * 60_000;

type JobKind = "deploy-org" | "reload-org" | "regenerate-gateway";

/** No deployer carried the request out in time (503 at the API). */
export class DeployerUnavailableError extends Error {
  override readonly name = "DeployerUnavailableError";
}

export interface DeployJobsOptions {
  db: Db;
  replicaId: string;
  /** This replica's deploys: status reads, and the jobs it carries out while it is the deployer. */
  deploys: StoreDeploys;
  clock?: Clock;
  timers?: Timers;
  pollMs?: number;
  waitMs?: number;
  logger?: Logger;
  /** The jobs of this engine node (issue 25); absent: the one implicit engine's. */
  nodeId?: string;
}

/** The server's ConfigDeploys: local on the deployer, through the store anywhere else. */
export class DeployJobs {
  private readonly jobs;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly pollMs: number;
  private readonly waitMs: number;
  private serving = false;
  private readonly pollTimer: BackgroundTimer;
  private polling: Promise<void> | null = null;

  constructor(private readonly options: DeployJobsOptions) {
    this.jobs = createDeployJobRepository(options.db, options.nodeId);
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.pollMs = options.pollMs ?? DEPLOY_JOB_POLL_MS;
    this.waitMs = options.waitMs ?? DEPLOY_JOB_WAIT_MS;
    this.pollTimer = new BackgroundTimer(this.timers);
  }

  deployOrgNow(orgId: string): Promise<OrgDeployOutcome> {
    return this.viaDeployer("deploy-org", orgId, null);
  }

  reloadOrg(orgId: string): Promise<ReloadResult> {
    return this.viaDeployer("reload-org", orgId, null);
  }

  regenerateGateway(trigger = "regenerate"): Promise<GatewayOutcome> {
    return this.viaDeployer("regenerate-gateway", null, trigger);
  }

  orgStatus(orgId: string, options?: { limit?: number }): Promise<OrgStatus> {
    return this.options.deploys.orgStatus(orgId, options);
  }

  /** This replica became the deployer: it carries out every job queued, from now on. */
  startServing(): void {
    this.serving = true;
    void this.poll();
  }

  /** This replica is no longer the deployer: waits for the job it is carrying out. */
  async stopServing(): Promise<void> {
    this.serving = false;
    this.pollTimer.cancel();
    await this.polling;
  }

  /** One look at the queue: every unfinished job is carried out, oldest first. */
  poll(): Promise<void> {
    this.polling ??= (async () => {
      try {
        for (const job of await this.jobs.unfinished()) {
          if (!this.serving) break;
          if (!(await this.jobs.claim(job.id, this.options.replicaId))) continue;
          const outcome = await this.carryOut(job);
          await this.jobs.finish(job.id, JSON.stringify(outcome), this.clock().toISOString());
        }
        const abandoned = new Date(this.clock().getTime() - ABANDONED_AFTER_MS).toISOString();
        if (this.serving) await this.jobs.removeFinishedBefore(abandoned);
      } catch (error) {
        this.options.logger?.error({ err: error }, "on-request deploy jobs failed");
      } finally {
        this.polling = null;
        this.schedulePoll();
      }
    })();
    return this.polling;
  }

  private async carryOut(job: DeployJob): Promise<{ ok: unknown } | { error: JobError }> {
    try {
      return { ok: await this.runHere(job.kind as JobKind, job.orgId, job.trigger) };
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      return { error: { name, message } };
    }
  }

  private runHere(kind: JobKind, orgId: string | null, trigger: string | null): Promise<unknown> {
    const deploys = this.options.deploys;
    switch (kind) {
      case "deploy-org":
        return deploys.deployOrgNow(orgId ?? "");
      case "reload-org":
        return deploys.reloadOrg(orgId ?? "");
      case "regenerate-gateway":
        return deploys.regenerateGateway(trigger ?? "regenerate");
    }
  }

  private async viaDeployer<T>(
    kind: JobKind,
    orgId: string | null,
    trigger: string | null,
  ): Promise<T> {
    if (this.serving) return (await this.runHere(kind, orgId, trigger)) as T;
    const id = randomUUID();
    await this.jobs.add({
      id,
      kind,
      orgId,
      trigger,
      requestedBy: this.options.replicaId,
      at: this.clock().toISOString(),
    });
    const deadline = this.timers.now() + this.waitMs;
    for (;;) {
      const row = await this.jobs.find(id);
      if (row?.finished_at && row.outcome !== null) {
        await this.jobs.remove(id);
        return answerOf<T>(row.outcome);
      }
      if (this.timers.now() >= deadline) {
        // Not started: withdrawn, so it never runs after the caller was told it did not.
        const withdrawn = await this.jobs.remove(id, { unclaimedOnly: true });
        const seconds = Math.round(this.waitMs / 1000);
        throw new DeployerUnavailableError(
          withdrawn
            ? `No deployer took the request within ${seconds} s; see /health for the replica holding the deployer role`
            : `The deployer has not finished the request within ${seconds} s; it goes on (see GET /config/status)`,
        );
      }
      await new Promise<void>((resolve) => this.timers.setTimer(this.pollMs, resolve));
    }
  }

  private schedulePoll(): void {
    if (this.serving) this.pollTimer.arm(this.pollMs, () => this.poll());
  }
}

interface JobError {
  name: string;
  message: string;
}

/** The deployer's answer as the requester returns it: the outcome, or the same error kind. */
function answerOf<T>(outcome: string): T {
  const answer = JSON.parse(outcome) as { ok: T } | { error: JobError };
  if ("ok" in answer) return answer.ok;
  const { name, message } = answer.error;
  if (name === "UnknownOrgError") throw new UnknownOrgError(message);
  if (name === "CompileRefusedError") throw new CompileRefusedError(message);
  throw new Error(message);
}
