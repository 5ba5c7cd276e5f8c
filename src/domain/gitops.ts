// GitOps against the store, shared by `pbxctl apply` and `pbxctl export`: opening the store of a
// data directory, picking the org files a git push changed, applying each org file (all or
// nothing per org) and deploying the orgs that changed.
import { existsSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import { simpleGit } from "simple-git";
import { loadConfig, storeLocationFrom } from "../config.js";
import type { DeployRecord } from "../deploy/deploy-log.js";
import type { StoreDeploys } from "../deploy/store-deploys.js";
import type { LoadedOrg } from "../model/files.js";
import { type Db, openStore } from "../store/database.js";
import { type ApplyOptions, applyOrgState, type OrgApplyResult } from "./apply.js";

export interface DataStore {
  dataDir: string;
  /** The SQLite file of the store (`<data-dir>/pbx.db`). */
  dbFile: string;
  db: Db;
  serverKey: Buffer;
}

/** A store file that does not exist where the command looked. */
export class NoStoreError extends Error {
  override readonly name = "NoStoreError";
}

/**
 * Opens (and migrates) the store of `dataDir` (default PBX_DATA_DIR or ./var). With `create:
 * false` a missing store is an error instead of a new empty one. Never generates an admin
 * password (that is the server's first start, which prints it).
 */
export async function openDataStore(
  env: NodeJS.ProcessEnv,
  dataDir: string | undefined,
  options: { create: boolean },
): Promise<DataStore> {
  const dir = resolve(dataDir ?? (env.PBX_DATA_DIR || "./var"));
  const store = storeLocationFrom(env, resolve(dir, "pbx.db"));
  if (!options.create && store.kind === "sqlite" && !existsSync(store.file)) {
    throw new NoStoreError(`no store in ${dir} (pbx.db): give --data-dir or PBX_DATA_DIR`);
  }
  const config = loadConfig(
    { ...env, PBX_ADMIN_PASSWORD: env.PBX_ADMIN_PASSWORD || "unused-by-cli" },
    { dataDir: dir },
  );
  return {
    dataDir: config.dataDir,
    dbFile: config.dbFile,
    db: await openStore(store),
    serverKey: config.serverKey,
  };
}

/**
 * The org files among `paths` (files, or directories one level deep) that were added or changed
 * between git revision `rev` and the working tree. Deleted files are not returned: an org is
 * never deleted by removing its file.
 */
export async function orgFilesChangedSince(
  paths: readonly string[],
  rev: string,
): Promise<string[]> {
  const git = simpleGit({ baseDir: process.cwd() });
  let root: string;
  try {
    root = (await git.revparse(["--show-toplevel"])).trim();
    if ((await git.revparse(["--verify", "--quiet", `${rev}^{commit}`])).trim() === "") {
      throw new Error("unknown revision");
    }
  } catch {
    throw new NoStoreError(`${rev}: not a revision of the git repository at ${process.cwd()}`);
  }
  const scope = paths.length > 0 ? [...paths] : ["."];
  const names = await git.raw(["diff", "--name-only", "--diff-filter=d", rev, "--", ...scope]);
  const untracked = await git.raw(["ls-files", "--others", "--exclude-standard", "--", ...scope]);
  const inScope = (file: string) =>
    scope.some((p) => {
      const rel = relative(resolve(p), resolve(root, file));
      // A file given directly, or one directly inside a given directory.
      return rel === "" || (!rel.startsWith("..") && !rel.includes(sep));
    });
  return [...new Set([...names.split("\n"), ...untracked.split("\n")])]
    .filter((name) => /\.ya?ml$/.test(name))
    .filter(inScope)
    .map((name) => relative(process.cwd(), resolve(root, name)) || name)
    .sort();
}

export interface FileApplyResult extends OrgApplyResult {
  file: string;
}

export interface ApplyFailure {
  file: string;
  orgId: string;
  error: string;
}

/** Applies each org file in its own transaction; one org's failure leaves the others applied. */
export async function applyOrgFiles(
  db: Db,
  orgs: readonly LoadedOrg[],
  options: ApplyOptions,
): Promise<{ results: FileApplyResult[]; failures: ApplyFailure[] }> {
  const results: FileApplyResult[] = [];
  const failures: ApplyFailure[] = [];
  for (const { file, state } of orgs) {
    try {
      results.push({ file, ...(await applyOrgState(db, state, options)) });
    } catch (error) {
      failures.push({ file, orgId: state.org.id, error: (error as Error).message });
    }
  }
  return { results, failures };
}

export interface AppliedDeploy {
  orgId: string;
  record: DeployRecord | null;
  error?: string;
}

/**
 * Deploys every applied org, diff-aware (an org already live writes and reloads nothing, one
 * saved but not live is brought live: an unchanged file still reconciles the engine), then the
 * gateway if DIDs moved.
 */
export async function deployAppliedOrgs(
  deploys: Pick<StoreDeploys, "deployOrgNow" | "regenerateGateway">,
  results: readonly OrgApplyResult[],
): Promise<{ orgs: AppliedDeploy[]; gateway: DeployRecord | null }> {
  const orgs: AppliedDeploy[] = [];
  for (const result of results) {
    try {
      const outcome = await deploys.deployOrgNow(result.orgId);
      orgs.push({ orgId: result.orgId, record: outcome.record });
    } catch (error) {
      orgs.push({ orgId: result.orgId, record: null, error: (error as Error).message });
    }
  }
  const gateway = results.some((r) => r.didsChanged)
    ? (await deploys.regenerateGateway("apply")).record
    : null;
  return { orgs, gateway };
}
