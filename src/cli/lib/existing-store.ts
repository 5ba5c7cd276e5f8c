// The store a command reads or changes must already exist (only `serve` and `apply` create one):
// a missing one is the command's precise failure, not a stack trace.
import { type DataStore, NoStoreError, openDataStore } from "../../domain/config/gitops.js";
import { CommandFailure } from "./base-command.js";

/** Opens the store of `dataDir` (or PBX_DATA_DIR / PBX_DATABASE_URL); none there: CommandFailure. */
export async function openExistingStore(dataDir: string | undefined): Promise<DataStore> {
  return openDataStore(process.env, dataDir, { create: false }).catch((error: unknown) => {
    if (error instanceof NoStoreError) throw new CommandFailure(error.message);
    throw error;
  });
}
