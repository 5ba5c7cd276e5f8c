// Loading org files for commands that compile: every problem printed, nothing compiled on errors.

import { resolve } from "node:path";
import type { Step } from "../../deploy/progress.js";
import { orgFilePaths } from "../../model/org-file-paths.js";
import { hasErrors, type LoadedOrg, type LoadResult } from "../../model/org-file-result.js";
import type { SecretEnvironment } from "../../model/secrets.js";
import { CommandFailure } from "./base-command.js";
import { loadOrgFileList, loadOrgFiles } from "./org-files.js";

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
  options: { cache: boolean },
): Promise<LoadedOrg[]> {
  const result = await loadOrgFiles(paths, { env, cache: options.cache });
  report(result);
  if (hasErrors(result.diagnostics)) {
    const { errors } = countProblems(result);
    throw new CommandFailure(`${errors} error(s) in org files; nothing was compiled`);
  }
  if (result.orgs.length === 0)
    throw new CommandFailure(`no org files (*.yaml) in ${paths.join(" ")}`);
  return result.orgs;
}

/**
 * The orgs of `changed`, loaded beside every org file of `scope` (files, or directories one
 * level deep): only the changed files are parsed, the others' cached summaries take part in the
 * checks across files. Reports the changed files' problems and every problem across files,
 * and throws like `loadValidOrgs` when one is an error.
 */
export async function loadChangedOrgs(
  scope: readonly string[],
  changed: readonly string[],
  env: SecretEnvironment,
  report: (result: LoadResult) => void,
  options: { cache: boolean },
): Promise<LoadedOrg[]> {
  const inScope = await orgFilePaths(scope);
  const known = new Set(inScope.map((file) => resolve(file)));
  const files = [...inScope, ...changed.filter((file) => !known.has(resolve(file)))];
  const wanted = new Set(changed.map((file) => resolve(file)));
  const statesOf = new Set(files.filter((file) => wanted.has(resolve(file))));
  const load = await loadOrgFileList(files, { env, cache: options.cache, statesOf });
  const crossFile = new Set(load.crossFile);
  const diagnostics = load.diagnostics.filter((d) => statesOf.has(d.file) || crossFile.has(d));
  const result = { orgs: load.orgs, diagnostics };
  report(result);
  if (hasErrors(diagnostics)) {
    const { errors } = countProblems(result);
    throw new CommandFailure(`${errors} error(s) in org files; nothing was compiled`);
  }
  return load.orgs;
}

/** The progress step of `compile` and `deploy` that loads the org files, as `loadValidOrgs`. */
export function loadOrgFilesStep(
  paths: readonly string[],
  report: (result: LoadResult) => void,
  loaded: (orgs: LoadedOrg[]) => void,
  options: { cache: boolean },
): Step {
  return {
    title: `Load org files from ${paths.join(" ")}`,
    run: async () => {
      const orgs = await loadValidOrgs(paths, process.env, report, options);
      loaded(orgs);
      return `Loaded ${orgs.length} org(s)`;
    },
  };
}
