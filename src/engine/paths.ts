// Where the engine's files live. config.ts resolves them from the environment
// (resolveEnginePaths), so the server, the CLI and the deployer agree.

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
 * The store-less default (`./var/gitops-asterisk`): never `<data-dir>/asterisk`, the directory a
 * server's store deploys into, so `pbxctl deploy` without `--etc` cannot overwrite a server's files.
 */
export const DEFAULT_GITOPS_ENGINE_DIR = "./var/gitops-asterisk";
