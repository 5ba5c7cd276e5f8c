// Loading org files for commands that compile: every problem printed, nothing compiled on errors.
import type { Step } from "../../deploy/progress.js";
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

/** The progress step of `compile` and `deploy` that loads the org files, as `loadValidOrgs`. */
export function loadOrgFilesStep(
  paths: readonly string[],
  report: (result: LoadResult) => void,
  loaded: (orgs: LoadedOrg[]) => void,
): Step {
  return {
    title: `Load org files from ${paths.join(" ")}`,
    run: async () => {
      const orgs = await loadValidOrgs(paths, process.env, report);
      loaded(orgs);
      return `Loaded ${orgs.length} org(s)`;
    },
  };
}
