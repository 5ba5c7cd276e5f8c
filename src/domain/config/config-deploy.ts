// Configuration management use cases (SPEC.md §4.2): deploy the caller's org now, reload its
// engine modules, show what is live (desired beside applied revision), regenerate an org, and
// regenerate the gateway dispatcher. The deploy machinery is reached through the ConfigDeploys
// port; the server wires the store-backed implementation (src/deploy/store-deploys.ts).
import { DeployerUnavailableError } from "../../deploy/deploy-jobs.js";
import type { DeployRecord } from "../../deploy/deploy-log.js";
import { CompileRefusedError } from "../../deploy/store-builds.js";
import type {
  GatewayOutcome,
  OrgDeployOutcome,
  OrgStatus,
  ReloadResult,
} from "../../deploy/store-deploys.js";
import { UnknownOrgError } from "../../deploy/store-deploys.js";
import type {
  ConfigReloadView,
  DeployView,
  ReloadView,
  StatusView,
} from "../../model/deploy-views.js";
import type { OrgPrincipal } from "../access/principal.js";
import type { DomainDeps } from "../deps.js";
import { Conflict, DomainError, NotFound, Unavailable } from "../errors.js";
import { assertOwnOrg, requestRedeploy } from "../orgs/organizations.js";

/** What the configuration endpoints need from the deploy side. */
export interface ConfigDeploys {
  deployOrgNow(orgId: string): Promise<OrgDeployOutcome>;
  reloadOrg(orgId: string): Promise<ReloadResult>;
  orgStatus(orgId: string, options?: { limit?: number }): Promise<OrgStatus>;
  regenerateGateway(trigger?: string): Promise<GatewayOutcome>;
}

/** 502: the engine (or the deploy into it) failed; the configuration is saved but not live. */
export class EngineFailed extends DomainError {
  readonly status = 502;
}

function deploysOf(deps: DomainDeps): ConfigDeploys {
  if (!deps.configDeploys)
    throw new Unavailable("Engine deploys are not configured on this server");
  return deps.configDeploys;
}

function reloadView(outcome: DeployRecord["reloads"][number]): ReloadView {
  return {
    command: outcome.command,
    status: outcome.status,
    attempts: outcome.attempts,
    duration_ms: Math.round(outcome.durationMs),
    ...(outcome.output !== undefined ? { output: outcome.output } : {}),
    ...(outcome.error !== undefined ? { error: outcome.error } : {}),
  };
}

/** Maps the deploy side's failures to domain errors; rethrows anything else. */
async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UnknownOrgError) throw new NotFound("Organization not found");
    if (error instanceof CompileRefusedError) throw new Conflict(error.message);
    if (error instanceof DeployerUnavailableError) throw new Unavailable(error.message);
    throw error;
  }
}

function deployView(outcome: OrgDeployOutcome): DeployView {
  const { record } = outcome;
  if (record.result === "failed") {
    throw new EngineFailed(`Deploy failed: ${record.error ?? "unknown error"}`);
  }
  return {
    success: true,
    org_id: outcome.orgId,
    unit: outcome.unit,
    result: record.result,
    revision: record.revision,
    previous_revision: record.previousRevision,
    files_written: record.filesWritten,
    files_removed: record.filesRemoved,
    reloads: record.reloads.map(reloadView),
    health: record.health?.status ?? null,
    duration_ms: Math.round(record.durationMs),
    related: outcome.related.map((r) => ({
      unit: r.unit,
      result: r.result,
      files_written: r.filesWritten,
      files_removed: r.filesRemoved,
    })),
  };
}

/** `POST /config/deploy`: compiles the caller's org from the store and deploys it now. */
export async function deployOwnConfig(
  deps: DomainDeps,
  principal: OrgPrincipal,
): Promise<DeployView> {
  const deploys = deploysOf(deps);
  return deployView(await guarded(() => deploys.deployOrgNow(principal.orgId)));
}

/**
 * `POST /organizations/{id}/regenerate`: own org only; regenerates and deploys it now. A server
 * without a deploy service (tests, tools) schedules the deploy instead and says so.
 */
export async function regenerateOrganization(
  deps: DomainDeps,
  principal: OrgPrincipal,
  id: string,
): Promise<DeployView | { success: true; scheduled: true }> {
  if (!deps.configDeploys) return requestRedeploy(deps, principal, id);
  assertOwnOrg(principal, id);
  const deploys = deps.configDeploys;
  return deployView(await guarded(() => deploys.deployOrgNow(id)));
}

/** `POST /config/reload`: reloads the engine modules of the caller's org (its queues by name). */
export async function reloadOwnConfig(
  deps: DomainDeps,
  principal: OrgPrincipal,
): Promise<ConfigReloadView> {
  const deploys = deploysOf(deps);
  const result = await guarded(() => deploys.reloadOrg(principal.orgId));
  const failed = result.reloads.filter((o) => o.status === "failed");
  if (failed.length > 0) {
    throw new EngineFailed(
      `Reload failed: ${failed.map((o) => `${o.command}: ${o.error ?? "failed"}`).join("; ")}`,
    );
  }
  return {
    success: true,
    unit: result.unit,
    reloads: result.reloads.map(reloadView),
    health: result.health?.status ?? null,
  };
}

/** `GET /config/status`: desired vs applied revision of the caller's org and its last deploys. */
export async function ownConfigStatus(
  deps: DomainDeps,
  principal: OrgPrincipal,
  options: { limit?: number } = {},
): Promise<StatusView> {
  const deploys = deploysOf(deps);
  const status = await guarded(() => deploys.orgStatus(principal.orgId, options));
  return {
    org_id: status.orgId,
    unit: status.unit,
    served: status.served,
    desired_revision: status.desiredRevision,
    applied_revision: status.appliedRevision,
    applied_at: status.appliedAt,
    live: status.live,
    deploy_scheduled: status.deployScheduled,
    compile_error: status.compileError,
    deploys: status.deploys.map((record) => ({
      id: record.id,
      at: record.startedAt,
      trigger: record.trigger,
      result: record.result,
      revision: record.revision,
      files_written: record.filesWritten,
      files_removed: record.filesRemoved,
      reloads: record.reloads.map(reloadView),
      health: record.health?.status ?? null,
      duration_ms: Math.round(record.durationMs),
      error: record.error ?? null,
    })),
    // Realtime PJSIP mode only: file mode answers as it always did.
    ...(status.realtimePending
      ? {
          realtime_pending: {
            unwritten: status.realtimePending.unwritten,
            not_taken: status.realtimePending.notTaken,
          },
        }
      : {}),
  };
}

/** `POST /admin/regenerate-gateway`: rebuilds the inbound dispatcher from every assigned DID. */
export async function regenerateGateway(
  deps: DomainDeps,
): Promise<{ success: true; didCount: number; orgCount: number }> {
  const deploys = deploysOf(deps);
  const outcome = await guarded(() => deploys.regenerateGateway("regenerate"));
  if (outcome.record.result === "failed") {
    throw new EngineFailed(`Gateway deploy failed: ${outcome.record.error ?? "unknown error"}`);
  }
  return { success: true, didCount: outcome.didCount, orgCount: outcome.orgCount };
}
