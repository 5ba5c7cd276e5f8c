// Where the engine's files live: one function so the server, the CLI and the deployer agree.
import { join, resolve } from "node:path";

export interface EnginePaths {
  /** The engine config directory the deployer writes (`orgs/`, `gateway/`, top-level files). */
  asteriskDir: string;
  /** The sounds directory (greetings under `greetings/`). */
  soundsDir: string;
  /**
   * Call recordings, `<org id>/<uniqueid>.wav`: what MixMonitor writes under the engine's
   * `<astspooldir>/monitor`, so it must be that directory or a link to it (docs/engine.md).
   */
  recordingsDir: string;
  /**
   * Engine nodes' directories (issue 25, docs/nodes.md): node `<name>`'s engine directory is
   * `<nodesDir>/<name>`, the directory that node's Asterisk loads.
   */
  nodesDir: string;
}

/** The default data directory when neither a flag nor `PBX_DATA_DIR` names one. */
export const DEFAULT_DATA_DIR = "./var";

/**
 * Resolves the engine paths: `<data-dir>/asterisk` unless `PBX_ASTERISK_DIR`, `<data-dir>/sounds`
 * unless `PBX_SOUNDS_DIR`, `<data-dir>/recordings` unless `PBX_RECORDINGS_DIR`, `<data-dir>/nodes` unless `PBX_NODES_DIR`. Reads only the
 * env object it is given; returns absolute paths.
 */
export function resolveEnginePaths(
  env: Readonly<Record<string, string | undefined>>,
  dataDir: string = env.PBX_DATA_DIR || DEFAULT_DATA_DIR,
): EnginePaths {
  return {
    asteriskDir: resolve(env.PBX_ASTERISK_DIR || join(dataDir, "asterisk")),
    soundsDir: resolve(env.PBX_SOUNDS_DIR || join(dataDir, "sounds")),
    recordingsDir: resolve(env.PBX_RECORDINGS_DIR || join(dataDir, "recordings")),
    nodesDir: resolve(env.PBX_NODES_DIR || join(dataDir, "nodes")),
  };
}

/**
 * The store-less default (`./var/gitops-asterisk`): never `<data-dir>/asterisk`, the directory a
 * server's store deploys into, so `pbxctl deploy` without `--etc` cannot overwrite a server's files.
 */
export const DEFAULT_GITOPS_ENGINE_DIR = "./var/gitops-asterisk";

/** The engine directory of the store-less commands (deploy, status --etc, rollback). */
export function resolveGitopsEngineDir(env: Readonly<Record<string, string | undefined>>): string {
  return resolve(env.PBX_ASTERISK_DIR || DEFAULT_GITOPS_ENGINE_DIR);
}
