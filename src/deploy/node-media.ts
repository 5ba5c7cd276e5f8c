// Media that follows the org (issue 25, docs/nodes.md "Media and recordings with several nodes").
// The API writes an org's audio once, into the replicas' sounds directory (PBX_SOUNDS_DIR):
// generated IVR greetings (`greetings/greeting_ivr_<ivr id>.wav`), uploaded greetings
// (`custom/<org id>/*.wav`) and music on hold (`moh/<org id>/*.wav`). Each engine node plays from
// its own sounds directory (src/deploy/node-dirs.ts), so a node's deployer copies there the media
// of the orgs it holds (as primary or as warm standby, like their configuration), as part of each org's deploy and before its reloads (a new greeting or
// music class is on the node before the dialplan or class that names it), and removes the copies
// of an org that left the node (moved, pinned elsewhere, no longer its standby, suspended or
// deleted).
//
// What a node holds of an org is listed in a manifest, `<node sounds>/.pbxctl/media/<org id>.json`
// (path, size and modification time of the source when copied): an unchanged file is not copied
// again, and an org that is gone (whose IVRs can no longer be read) still has its greetings
// removed. The manifest is read as untrusted input: only paths of the three shapes above are
// ever touched.
//
// Only the node's deployer-lease holder may change the node's copies, as only it may reload the
// node: a deployer that lost its lease without knowing yet (paused past the expiry) could
// otherwise remove the copies of an org the new holder has just placed there, from a stale view
// of the placements. So every copy, removal and manifest write is fenced like a reload
// (fenced-target.ts): refused before it is made, and reported failed when the lease was lost
// while it ran, which fails the org's deploy so it is left for the new holder.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { removeFileDurable, writeFileAtomic } from "../atomic-files.js";
import type { Db } from "../store/database.js";
import { isOnNode } from "../store/engine-node-repository.js";
import { createIvrRepository } from "../store/ivr-repository.js";
import { createOrganizationRepository, isServed } from "../store/organization-repository.js";
import { type ReloadFence, runFenced } from "./fenced-target.js";
import { wavNamesIn } from "./moh-files.js";

/** Where the manifests are, under the node's sounds directory. */
export const MEDIA_MANIFEST_DIR = join(".pbxctl", "media");

const UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
const ORG_ID = new RegExp(`^${UUID}$`);
/** The only paths a copy may have: what the compiled dialplan and music classes play. */
const MEDIA_PATH = new RegExp(
  `^(greetings/greeting_ivr_${UUID}|(custom|moh)/${UUID}/[a-z0-9_-]{1,64})\\.wav$`,
);

interface Stamp {
  size: number;
  mtimeMs: number;
}

/** Relative media path -> the source's stamp when it was copied. */
type Manifest = Record<string, Stamp>;

/** What one org's sync did on the node. */
export interface MediaSync {
  copied: string[];
  removed: string[];
}

/** The part the deploys call (src/deploy/store-deploys.ts). */
export interface OrgMediaSync {
  /** Makes the node's copy of the org's media current, or removes it when the org is not here. */
  syncOrg(orgId: string): Promise<MediaSync>;
  /** Removes the copies of every org not in `keep` (the start-up deploy's clean-up). */
  pruneExcept(keep: ReadonlySet<string>): Promise<MediaSync>;
}

export interface NodeMediaOptions {
  db: Db;
  /** The node whose orgs' media is copied. */
  nodeId: string;
  /** The replicas' sounds directory (PBX_SOUNDS_DIR), where the API writes media. */
  sourceDir: string;
  /** The node's sounds directory (`<nodes dir>/<name>.sounds`). */
  nodeDir: string;
  /**
   * Throws when this process may no longer change the node (it lost the node's deployer lease);
   * checked before and after each file it writes or removes. Absent: unfenced (one process).
   */
  fence?: ReloadFence;
}

/** One node's copies of its orgs' media. */
export class NodeMediaCopies implements OrgMediaSync {
  constructor(private readonly options: NodeMediaOptions) {}

  /** `act` (a change of the node's files, described by `what`) under the fence, if any. */
  private fenced<T>(what: string, act: () => Promise<T>): Promise<T> {
    const fence = this.options.fence;
    return fence ? runFenced(fence, what, act) : act();
  }

  async syncOrg(orgId: string): Promise<MediaSync> {
    if (!ORG_ID.test(orgId)) throw new Error(`not an org id: ${orgId}`);
    const wanted = await this.wantedPaths(orgId);
    const before = await this.readManifest(orgId);
    const after: Manifest = {};
    const copied: string[] = [];
    for (const path of wanted) {
      const source = await stampOf(join(this.options.sourceDir, path));
      if (source === null) continue; // named but not generated yet: nothing to play anyway
      const known = before[path];
      const target = join(this.options.nodeDir, path);
      if (!known || !sameStamp(known, source) || (await stampOf(target)) === null) {
        await this.fenced(`the copy of ${path}`, () =>
          copyDurably(join(this.options.sourceDir, path), target),
        );
        copied.push(path);
      }
      after[path] = source;
    }
    const removed = await this.removeAll(Object.keys(before).filter((path) => !(path in after)));
    if (copied.length > 0 || removed.length > 0) {
      await this.writeManifest(orgId, after);
    }
    return { copied, removed };
  }

  async pruneExcept(keep: ReadonlySet<string>): Promise<MediaSync> {
    const removed: string[] = [];
    for (const orgId of await this.orgsWithCopies()) {
      if (keep.has(orgId)) continue;
      removed.push(...(await this.removeAll(Object.keys(await this.readManifest(orgId)))));
      await this.writeManifest(orgId, {});
    }
    return { copied: [], removed };
  }

  /** The org's media paths the node must have; none when the org is not served here. */
  private async wantedPaths(orgId: string): Promise<string[]> {
    const { db, nodeId, sourceDir } = this.options;
    const handle = await createOrganizationRepository(db).findHandle(orgId);
    if (!handle || !isServed(handle.status) || !(await isOnNode(db, orgId, nodeId))) return [];
    const greetings = (await createIvrRepository(db).listByOrg(orgId))
      .map((ivr) => ivr.greeting_prompt)
      .filter((prompt): prompt is string => typeof prompt === "string")
      .map((prompt) => `greetings/${prompt}.wav`);
    const folders = await Promise.all(
      ["custom", "moh"].map(async (kind) =>
        (await wavNamesIn(join(sourceDir, kind, orgId))).map((n) => `${kind}/${orgId}/${n}.wav`),
      ),
    );
    return [...greetings, ...folders.flat()].filter((path) => MEDIA_PATH.test(path)).sort();
  }

  private async removeAll(paths: readonly string[]): Promise<string[]> {
    const removed: string[] = [];
    for (const path of paths) {
      if (!MEDIA_PATH.test(path)) continue;
      await this.fenced(`the removal of ${path}`, () =>
        removeFileDurable(join(this.options.nodeDir, path), this.options.nodeDir),
      );
      removed.push(path);
    }
    return removed;
  }

  private manifestPath(orgId: string): string {
    return join(this.options.nodeDir, MEDIA_MANIFEST_DIR, `${orgId}.json`);
  }

  private async readManifest(orgId: string): Promise<Manifest> {
    let text: string;
    try {
      text = await readFile(this.manifestPath(orgId), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw error;
    }
    const parsed: unknown = JSON.parse(text);
    const manifest: Manifest = {};
    if (typeof parsed !== "object" || parsed === null) return manifest;
    for (const [path, stamp] of Object.entries(parsed)) {
      if (MEDIA_PATH.test(path) && isStamp(stamp)) manifest[path] = stamp;
    }
    return manifest;
  }

  /** Writes the manifest; an empty one is removed (the org has nothing on the node). */
  private async writeManifest(orgId: string, manifest: Manifest): Promise<void> {
    const path = this.manifestPath(orgId);
    await this.fenced(`the media manifest of org ${orgId}`, async () => {
      if (Object.keys(manifest).length === 0) {
        await removeFileDurable(path, join(this.options.nodeDir, MEDIA_MANIFEST_DIR));
        return;
      }
      await writeFileAtomic(path, `${JSON.stringify(manifest, null, 2)}\n`);
    });
  }

  private async orgsWithCopies(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(join(this.options.nodeDir, MEDIA_MANIFEST_DIR));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    return names
      .filter((name) => name.endsWith(".json"))
      .map((name) => name.slice(0, -".json".length))
      .filter((orgId) => ORG_ID.test(orgId))
      .sort();
  }
}

function isStamp(value: unknown): value is Stamp {
  const stamp = value as Stamp;
  return (
    typeof value === "object" &&
    value !== null &&
    typeof stamp.size === "number" &&
    typeof stamp.mtimeMs === "number"
  );
}

function sameStamp(a: Stamp, b: Stamp): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs;
}

async function stampOf(path: string): Promise<Stamp | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? { size: info.size, mtimeMs: info.mtimeMs } : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Copies `source` over `target` the way the API writes media: a call playing the old copy keeps
 * it, and no call ever opens a half-copied file (temp copy, then the atomic rename).
 */
async function copyDurably(source: string, target: string): Promise<void> {
  await writeFileAtomic(target, await readFile(source));
}
