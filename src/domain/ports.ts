// What the domain needs from parts written elsewhere (deployer, engine). The server wires the
// real implementations; tests pass recording fakes.

/** Asks for an org's configuration to be compiled and deployed soon (debounced elsewhere). */
export interface DeployScheduler {
  scheduleDeploy(orgId: string): void;
}

/** Reports the engine's state for /health, e.g. `files-only`, `connected`, `disconnected`. */
export type EngineHealthProbe = () => string | Promise<string>;

/** A scheduler that does nothing: for commands and tests that never deploy. */
export const noDeploys: DeployScheduler = { scheduleDeploy() {} };
