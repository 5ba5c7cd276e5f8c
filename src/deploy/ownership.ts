// Who writes an engine directory. Two writers must never share one: the server's store-backed
// deployer (`pbxctl serve`, `pbxctl apply`) and the store-less `pbxctl deploy` of YAML files each
// believe their source is the whole truth, so one silently overwrites the other's orgs and
// gateway routing. Each deployer records itself in `.pbxctl/owner.json` the first time it writes;
// `pbxctl deploy` and `pbxctl rollback` refuse a directory another source owns unless forced.
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { writeFileAtomic } from "../atomic-files.js";
import { STATE_DIR } from "./deploy-log.js";

/** `store`: a server's store in `dataDir`; `files`: `pbxctl deploy` of org YAML files. */
export type EngineDirOwner = { kind: "store"; dataDir: string } | { kind: "files" };

/** The store file a data directory holds (`<data-dir>/pbx.db`). */
const STORE_FILE = "pbx.db";

function ownerFile(engineDir: string): string {
  return join(engineDir, STATE_DIR, "owner.json");
}

/** Words naming an owner, for messages. */
export function describeOwner(owner: EngineDirOwner): string {
  return owner.kind === "store"
    ? `the server's store in ${owner.dataDir} (pbxctl serve / pbxctl apply deploy there)`
    : "pbxctl deploy of org YAML files";
}

/**
 * The recorded owner of `engineDir`, else the one its place implies: `<data-dir>/asterisk` beside
 * a `pbx.db` is that store's default engine directory even before it recorded itself.
 */
export async function readOwner(engineDir: string): Promise<EngineDirOwner | null> {
  const text = await readFile(ownerFile(engineDir), "utf8").catch(() => null);
  if (text !== null) {
    try {
      const owner = JSON.parse(text) as EngineDirOwner;
      if (owner.kind === "files") return { kind: "files" };
      if (owner.kind === "store" && typeof owner.dataDir === "string") return owner;
    } catch {
      // A damaged marker proves nothing; fall through to what the place implies.
    }
  }
  const dir = resolve(engineDir);
  const parent = dirname(dir);
  if (basename(dir) === "asterisk" && existsSync(join(parent, STORE_FILE))) {
    return { kind: "store", dataDir: parent };
  }
  return null;
}

/**
 * Records `owner` in `engineDir` unless an owner is already recorded there (or, with
 * `replace`, whatever is recorded).
 */
export async function claimEngineDir(
  engineDir: string,
  owner: EngineDirOwner,
  options: { replace?: boolean } = {},
): Promise<void> {
  if (!options.replace && existsSync(ownerFile(engineDir))) return;
  await writeFileAtomic(ownerFile(engineDir), `${JSON.stringify(owner)}\n`);
}

/**
 * Why `claimant` must not write `engineDir`, or null when it may: another owner is recorded (or
 * implied), or, with no owner, the directory holds org or gateway files that no pbxctl deploy
 * recorded (written by hand or by another tool).
 */
export async function foreignOwnerReason(
  engineDir: string,
  claimant: EngineDirOwner,
): Promise<string | null> {
  const owner = await readOwner(engineDir);
  if (owner) {
    const same =
      owner.kind === claimant.kind &&
      (owner.kind === "files" ||
        resolve(owner.dataDir) === resolve((claimant as { dataDir: string }).dataDir));
    return same ? null : `${engineDir} is owned by ${describeOwner(owner)}`;
  }
  if (existsSync(join(engineDir, STATE_DIR, "deploys.jsonl"))) return null;
  const orgs = await readdir(join(engineDir, "orgs")).catch(() => [] as string[]);
  const gateway = await readdir(join(engineDir, "gateway")).catch(() => [] as string[]);
  if (orgs.length > 0 || gateway.length > 0) {
    return `${engineDir} holds engine files that no pbxctl deploy recorded (written by another source)`;
  }
  return null;
}
