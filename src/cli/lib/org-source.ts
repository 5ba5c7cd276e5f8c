// Where a call-flow command (simulate, graph) reads an org from: org files, or the store with
// --org. Commands declare `orgSourceFlags` and call `loadOrgStates`.
import { Flags } from "@oclif/core";
import { isDomainError } from "../../domain/errors.js";
import { storedOrgState } from "../../domain/routing/call-flow.js";
import type { LoadResult } from "../../model/files.js";
import type { OrgState } from "../../model/org-state.js";
import { CommandFailure } from "./base-command.js";
import { openExistingStore } from "./existing-store.js";
import { cacheFlag } from "./flags.js";
import { loadValidOrgs } from "./load.js";

export const orgSourceFlags = {
  ...cacheFlag,
  org: Flags.string({ summary: "Org id or slug in the store, instead of org files." }),
  "data-dir": Flags.directory({
    summary: "Data directory holding the store, with --org (env PBX_DATA_DIR, default ./var).",
    dependsOn: ["org"],
  }),
};

/** The orgs of `paths` (every problem reported, errors refused), or the one stored org `org`. */
export async function loadOrgStates(
  paths: readonly string[],
  flags: { org?: string | undefined; "data-dir"?: string | undefined; cache: boolean },
  report: (result: LoadResult) => void,
): Promise<OrgState[]> {
  if (flags.org === undefined) {
    if (paths.length === 0) throw new CommandFailure("give org files or --org <id>");
    return (await loadValidOrgs(paths, process.env, report, { cache: flags.cache })).map(
      (o) => o.state,
    );
  }
  if (paths.length > 0) throw new CommandFailure("give org files or --org, not both");
  const store = await openExistingStore(flags["data-dir"]);
  try {
    return [await storedOrgState(store.db, flags.org)];
  } catch (error) {
    if (isDomainError(error)) throw new CommandFailure(error.message);
    throw error;
  } finally {
    await store.db.destroy();
  }
}
