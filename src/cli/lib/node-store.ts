// The store of --data-dir for `pbxctl nodes *`: the node use cases with the install's server key
// (an AMI secret is sealed under it) and the wall clock, a domain refusal as a one-line failure.
import { Flags } from "@oclif/core";
import { systemClock } from "../../clock.js";
import { isDomainError } from "../../domain/errors.js";
import type { NodeDeps } from "../../domain/nodes/engine-nodes.js";
import { CommandFailure } from "./base-command.js";
import { openExistingStore } from "./existing-store.js";

export const dataDirFlag = {
  "data-dir": Flags.directory({
    summary: "Data directory holding the store (env PBX_DATA_DIR, default ./var).",
  }),
};

/** Runs `body` over the store of `dataDir`, then closes it whatever happens. */
export async function withNodeStore<T>(
  dataDir: string | undefined,
  body: (deps: NodeDeps) => Promise<T>,
): Promise<T> {
  const store = await openExistingStore(dataDir);
  try {
    return await body({ db: store.db, config: { serverKey: store.serverKey }, clock: systemClock });
  } catch (error) {
    if (isDomainError(error)) throw new CommandFailure(error.message);
    throw error;
  } finally {
    await store.db.destroy();
  }
}
