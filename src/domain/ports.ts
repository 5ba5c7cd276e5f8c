// What the domain needs from parts written elsewhere (deployer, engine). The server wires the
// real implementations; tests pass recording fakes.
import type { Db } from "../store/database.js";

/** Asks for an org's configuration to be compiled and deployed soon (debounced elsewhere). */
export interface DeployScheduler {
  /**
   * Records that the org's deploy is owed, through `db`: the save's own transaction (or the
   * request's unit of work), so the record commits with the save or not at all and a crash right
   * after the commit leaves it for the deployer. A scheduler that keeps nothing in the store
   * records nothing.
   */
  recordDeploy(db: Db, orgId: string): Promise<void>;
  /** After the save committed: starts the debounced deploy now where this process deploys. */
  scheduleDeploy(orgId: string): void;
  /**
   * Whether the engine plays copies of the orgs' media made by their deploys (engine nodes,
   * docs/nodes.md): then a media change the configuration does not show (an uploaded greeting)
   * asks for a deploy too. Absent: false (the engine plays the one sounds directory).
   */
  copiesMedia?(): boolean;
}

/** Reports the engine's state for /health, e.g. `files-only`, `connected`, `disconnected`. */
export type EngineHealthProbe = () => string | Promise<string>;

/** A scheduler that does nothing: for commands and tests that never deploy. */
export const noDeploys: DeployScheduler = {
  async recordDeploy() {},
  scheduleDeploy() {},
};
