// Deploys and rollbacks of an engine directory as library calls: `pbxctl apply`, `deploy` and
// `rollback` parse flags, call these and print; an API operation could call them the same way.
// Each opens what it needs (the engine target, the store of the directory's owner), acts, and
// closes it again.
import { resolve } from "node:path";
import { type DeployLog, FileDeployLog } from "../deploy/deploy-log.js";
import { Deployer } from "../deploy/deployer.js";
import { foreignOwnerReason, readOwner } from "../deploy/ownership.js";
import {
  type DeployRecordSummary,
  reloadLines,
  summarizeRecord,
} from "../deploy/record-summary.js";
import { StoreDeployLog } from "../deploy/store-deploy-log.js";
import { createServerEngine } from "../deploy/store-engine.js";
import { orgUnit } from "../deploy/units.js";
import { createEngineTarget, type EngineKind, type EngineTarget } from "../engine/index.js";
import { resolveGitopsEngineDir } from "../engine/paths.js";
import type { OrgApplyResult } from "./apply.js";
import { type DataStore, deployAppliedOrgs, openDataStore } from "./gitops.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Another source (a server's store, or engine files nobody recorded) owns the directory. */
export class EngineDirOwnedError extends Error {
  override readonly name = "EngineDirOwnedError";
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** The engine directory of a store-less deploy: `--etc`, else PBX_ASTERISK_DIR or the default. */
export function gitopsEngineDir(env: Env, etc: string | undefined): string {
  return resolve(etc ?? resolveGitopsEngineDir(env));
}

/** What `pbxctl apply` reports of an org's deploy. */
export interface AppliedOrgDeploy {
  result: string;
  revision: string;
  reloads: string[];
  error?: string;
}

/**
 * Deploys the applied orgs from the store into the server's engine directory (diff-aware) and
 * the gateway when DIDs moved; pending deploys are flushed before it returns.
 * Throws EngineConfigError when the engine settings are incomplete.
 */
export async function deployAppliedToEngine(
  store: DataStore,
  env: Env,
  engineKind: EngineKind,
  results: readonly OrgApplyResult[],
): Promise<{
  orgs: { orgId: string; deploy: AppliedOrgDeploy }[];
  gateway: { result: string; reloads: string[] } | null;
}> {
  const engine = createServerEngine({
    env: { ...env, PBX_ENGINE: engineKind },
    dataDir: store.dataDir,
    db: store.db,
  });
  try {
    const deployed = await deployAppliedOrgs(engine.deploys, results);
    return {
      orgs: deployed.orgs.map((entry) => ({
        orgId: entry.orgId,
        deploy: entry.record
          ? {
              result: entry.record.result,
              revision: entry.record.revision,
              reloads: reloadLines(entry.record),
              ...(entry.record.error ? { error: entry.record.error } : {}),
            }
          : { result: "failed", revision: "", reloads: [], error: entry.error ?? "not deployed" },
      })),
      gateway: deployed.gateway && {
        result: deployed.gateway.result,
        reloads: reloadLines(deployed.gateway),
      },
    };
  } finally {
    await engine.close({ flush: true });
  }
}

/**
 * A Deployer for a store-less deploy of org files into `engineDir`, and the target it reloads.
 * Throws EngineDirOwnedError for a directory another source owns (unless `force`: a forced
 * deploy leaves the owner's record alone, the directory is still its), EngineConfigError for
 * incomplete engine settings. Close the target when done.
 */
export async function openFilesDeployer(options: {
  engineDir: string;
  engineKind: EngineKind;
  env: Env;
  force: boolean;
}): Promise<{ deployer: Deployer; target: EngineTarget }> {
  const foreign = await foreignOwnerReason(options.engineDir, { kind: "files" });
  if (foreign && !options.force) throw new EngineDirOwnedError(foreign);
  const target = createEngineTarget(options.env, options.engineKind, { actionTimeoutMs: 15_000 });
  const deployer = new Deployer({
    engineDir: options.engineDir,
    target,
    log: new FileDeployLog(options.engineDir),
    ...(foreign ? {} : { owner: { kind: "files" as const } }),
  });
  return { deployer, target };
}

/**
 * Puts back the org's kept previous files (`.pbxctl/previous/`) and reloads, recorded where the
 * directory's owner keeps its deploy log (a server's store, or `.pbxctl/`). Throws
 * EngineDirOwnedError (files nobody recorded, unless `force`), NoStoreError,
 * EngineConfigError, NoPreviousVersionError, InvalidDeployPathError.
 */
export async function rollbackOrg(options: {
  engineDir: string;
  contextPrefix: string;
  engineKind: EngineKind;
  env: Env;
  force: boolean;
}): Promise<DeployRecordSummary> {
  const etc = options.engineDir;
  const owner = await readOwner(etc);
  if (owner?.kind !== "store" && !options.force) {
    const foreign = await foreignOwnerReason(etc, { kind: "files" });
    if (foreign) throw new EngineDirOwnedError(foreign);
  }
  const store =
    owner?.kind === "store"
      ? await openDataStore(options.env, owner.dataDir, { create: false })
      : null;
  try {
    const log: DeployLog = store ? new StoreDeployLog(store.db) : new FileDeployLog(etc);
    const target = createEngineTarget(options.env, options.engineKind);
    try {
      const deployer = new Deployer({ engineDir: etc, target, log });
      return summarizeRecord(await deployer.rollback(orgUnit(options.contextPrefix)));
    } finally {
      await target.close();
    }
  } finally {
    await store?.db.destroy();
  }
}
