// Loading org files for commands that compile: every problem printed, nothing compiled on errors.
import { hasErrors, type LoadedOrg, type LoadResult } from "../../model/files.js";
import type { SecretEnvironment } from "../../model/secrets.js";
import { CommandFailure } from "./base-command.js";
import { loadOrgPathsInParallel } from "./parallel-load.js";

/** Counts of a load's diagnostics. */
export function countProblems(result: LoadResult): { errors: number; warnings: number } {
  const errors = result.diagnostics.filter((d) => d.severity === "error").length;
  return { errors, warnings: result.diagnostics.length - errors };
}

/**
 * Loads the org files and hands every diagnostic to `report`; throws a CommandFailure when any
 * is an error or no org file was found.
 */
export async function loadValidOrgs(
  paths: readonly string[],
  env: SecretEnvironment,
  report: (result: LoadResult) => void,
): Promise<LoadedOrg[]> {
  const result = await loadOrgPathsInParallel(paths, env);
  report(result);
  if (hasErrors(result.diagnostics)) {
    const { errors } = countProblems(result);
    throw new CommandFailure(`${errors} error(s) in org files; nothing was compiled`);
  }
  if (result.orgs.length === 0)
    throw new CommandFailure(`no org files (*.yaml) in ${paths.join(" ")}`);
  return result.orgs;
}
