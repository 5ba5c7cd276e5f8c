// Deploys and rollbacks of an engine directory as library calls: `pbxctl apply`, `deploy` and
// `rollback` parse flags, call these and print; an API operation could call them the same way.
// Each opens what it needs (the engine target, the store of the directory's owner), acts, and
// closes it again.
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type DeployLog, FileDeployLog } from "../../deploy/deploy-log.js";
import { Deployer } from "../../deploy/deployer.js";
import { foreignOwnerReason, readOwner } from "../../deploy/ownership.js";
import {
  type DeployRecordSummary,
  reloadLines,
  summarizeRecord,
} from "../../deploy/record-summary.js";
import { StoreDeployLog } from "../../deploy/store-deploy-log.js";
import { createServerEngine } from "../../deploy/store-engine.js";
import { orgUnit } from "../../deploy/units.js";
import { createEngineTarget, type EngineKind, type EngineTarget } from "../../engine/index.js";
import { resolveGitopsEngineDir } from "../../engine/paths.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
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
 * Throws EngineConfigError when the engine settings are incomplete, EngineUnavailableError when
 * the engine cannot be reached (nothing deployed; the store keeps what was applied).
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
    await engine.target.reach?.();
  } catch (error) {
    await engine.close({ flush: false });
    throw error;
  }
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
 * incomplete engine settings, EngineUnavailableError when the engine cannot be reached. Close the target when done.
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
  await reachOrClose(target);
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
 * EngineDirOwnedError (files nobody recorded, unless `force`), NoStoreError, UnknownOrgError,
 * EngineConfigError, EngineUnavailableError (unreachable engine), NoPreviousVersionError,
 * InvalidDeployPathError.
 */
export async function rollbackOrg(options: {
  engineDir: string;
  /** The org: its context prefix, id, or (in a directory a server's store owns) its slug. */
  org: string;
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
    const contextPrefix = await orgPrefixIn(etc, options.org, store);
    const log: DeployLog = store ? new StoreDeployLog(store.db) : new FileDeployLog(etc);
    const target = createEngineTarget(options.env, options.engineKind);
    await reachOrClose(target);
    try {
      const deployer = new Deployer({ engineDir: etc, target, log });
      return summarizeRecord(await deployer.rollback(orgUnit(contextPrefix)));
    } finally {
      await target.close();
    }
  } finally {
    await store?.db.destroy();
  }
}

/**
 * A command acts once: an engine it cannot reach is one clear failure now (EngineUnavailableError
 * naming the address and what to check), not a wait through every reload's reconnects.
 */
async function reachOrClose(target: EngineTarget): Promise<void> {
  try {
    await target.reach?.();
  } catch (error) {
    await target.close();
    throw error;
  }
}

/** `rollback --org` names no org the engine directory (or its owner's store) knows. */
export class UnknownOrgError extends Error {
  override readonly name = "UnknownOrgError";
}

const PREFIX_SHAPE = /^[A-Za-z][A-Za-z0-9_-]{0,46}_$/;

/**
 * The context prefix of `org` in `engineDir`: a prefix is taken as it is; an id or slug is looked
 * up in the owner's store when a server's store owns the directory; an id is also found in the
 * header of an org's generated dialplan (`pbxctl deploy` keeps no store to hold slugs).
 */
async function orgPrefixIn(
  engineDir: string,
  org: string,
  store: DataStore | null,
): Promise<string> {
  if (PREFIX_SHAPE.test(org)) return org;
  if (store) {
    const row = await createOrganizationRepository(store.db).findByIdOrSlug(org);
    if (row) return row.context_prefix;
    throw new UnknownOrgError(
      `no org with the id or slug "${org}" in the store at ${store.dataDir}, which owns ${engineDir}`,
    );
  }
  const prefixes = (await readdir(join(engineDir, "orgs")).catch(() => [] as string[]))
    .filter((name) => PREFIX_SHAPE.test(name))
    .sort();
  for (const prefix of prefixes) {
    const header = await readFile(join(engineDir, "orgs", prefix, "extensions.conf"), "utf8")
      .then((text) => text.slice(0, text.indexOf("\n")))
      .catch(() => "");
    if (header.includes(`(${org})`)) return prefix;
  }
  const known =
    prefixes.length > 0 ? `: one of ${prefixes.join(", ")}` : ` (${engineDir}/orgs holds none)`;
  throw new UnknownOrgError(
    `no org "${org}" deployed in ${engineDir}. Give its context prefix${known}; a slug is known ` +
      "only where a server's store owns the directory",
  );
}
