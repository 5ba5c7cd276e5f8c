// GitOps against the store, shared by `pbxctl apply` and `pbxctl export`: opening the store of a
// data directory, picking the org files a git push changed, applying each org file (all or
// nothing per org) and deploying the orgs that changed.
import { existsSync, mkdirSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { loadServerKey, storeLocationFrom } from "../../config.js";
import type { DeployRecord } from "../../deploy/deploy-log.js";
import type { StoreDeploys } from "../../deploy/store-deploys.js";
import type { LoadedOrg } from "../../model/files.js";
import { type Db, openStore } from "../../store/database.js";
import { type ApplyOptions, applyOrgState, type OrgApplyResult } from "./apply.js";
import { git, gitNames } from "./git.js";

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
  mkdirSync(dir, { recursive: true });
  // The server key alone: the rest of the configuration (its admin password hash, a scrypt) is
  // the server's.
  const serverKey = loadServerKey(env, dir);
  return { dataDir: dir, dbFile: join(dir, "pbx.db"), db: await openStore(store), serverKey };
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
  const cwd = process.cwd();
  let root: string;
  let commit: string;
  try {
    // An option is never a revision (nothing from a user reaches git as one).
    if (rev.startsWith("-")) throw new Error("not a revision");
    // One process: the repository's root, and the revision's commit (an error if it has none).
    const [top, id] = (
      await git(cwd, ["rev-parse", "--show-toplevel", "--verify", `${rev}^{commit}`])
    ).split("\n");
    if (!top || !id || !/^[0-9a-f]+$/.test(id)) throw new Error("not a revision");
    root = top;
    commit = id;
  } catch {
    throw new NoStoreError(`${rev}: not a revision of the git repository at ${cwd}`);
  }
  const scope = paths.length > 0 ? [...paths] : ["."];
  const [names, untracked] = await Promise.all([
    gitNames(cwd, ["diff", "--name-only", "-z", "--diff-filter=d", commit, "--", ...scope]),
    gitNames(cwd, [
      "ls-files",
      "-z",
      "--others",
      "--exclude-standard",
      "--full-name",
      "--",
      ...scope,
    ]),
  ]);
  const inScope = (file: string) =>
    scope.some((p) => {
      const rel = relative(resolve(p), resolve(root, file));
      // A file given directly, or one directly inside a given directory.
      return rel === "" || (!rel.startsWith("..") && !rel.includes(sep));
    });
  return [...new Set([...names, ...untracked])]
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
