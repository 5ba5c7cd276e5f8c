// `plan --base REV`: the configuration the org files compiled to at a git revision against the
// working tree, doing only what the change touched. An org whose file did not change compiles
// to the same files on both sides, so neither side compiles it: only the changed files are
// parsed (at REV and now), only their orgs compiled, the gateway only when the DIDs it
// dispatches moved and the top-level files only when the set of orgs did. The checks across
// files still cover every file, over the cached summaries of the others (org-files.ts).
import { basename, dirname } from "node:path";
import { impactOf, type OrgImpact } from "../../compiler/impact.js";
import type { SourceDiagnostic } from "../../model/diagnostic.js";
import type { GatewayOptions } from "../../model/gateway.js";
import { gatewayStateOf } from "../../model/gateway.js";
import { type LoadedOrg, type LoadResult, sortDiagnostics } from "../../model/org-file-result.js";
import type { GatewayOrg, GatewayState } from "../../model/org-state.js";
import { crossOrgProblems, keysOf, renamed, type SummarizedFile } from "../../model/org-summary.js";
import type { SecretEnvironment } from "../../model/secrets.js";
import { CommandFailure } from "./base-command.js";
import type { RunFile } from "./claims-index.js";
import { compilePartialTree } from "./compiled-tree.js";
import { changesSinceRevision } from "./git-base.js";
import { countProblems } from "./load.js";
import {
  loadOrgFileInputs,
  loadOrgFiles,
  type OrgFilesLoad,
  readingSummaries,
} from "./org-files.js";

export interface BasePlanInput {
  paths: readonly string[];
  rev: string;
  env: SecretEnvironment;
  cache: boolean;
  gateway: GatewayOptions;
  includeRoot?: string | undefined;
  /** Every org's state is needed after all (flow assertions run over them). */
  allStates: boolean;
  report: (result: LoadResult) => void;
}

export interface BasePlanTrees {
  /** The changed part of the tree at the revision and now (what is the same on both is left out). */
  before: Map<string, string>;
  after: Map<string, string>;
  impact: OrgImpact[];
  /** The states of the working tree's orgs: every org with `allStates`, else the changed ones. */
  orgs: LoadedOrg[];
}

/** The trees `planTrees` compares for `plan --base`, and the impact of the change. */
export async function basePlanTrees(input: BasePlanInput): Promise<BasePlanTrees> {
  const changes = await changesSinceRevision(input.paths, input.rev);
  const after = await loadOrgFiles(input.paths, {
    env: input.env,
    cache: input.cache,
    statesOf: input.allStates ? "all" : changes.changed,
  });
  input.report(after);
  refuseErrors(
    after.diagnostics,
    `${countProblems(after).errors} error(s) in org files; nothing was compiled`,
  );
  if (after.summaries.length === 0) {
    throw new CommandFailure(`no org files (*.yaml) in ${input.paths.join(" ")}`);
  }

  // The revision's side: the changed files as they were, beside the others' summaries (the
  // same text, so the same summary), in repository order as the files were listed there.
  const beforeChanged = await loadOrgFileInputs(
    changes.before.map((source) => ({
      ...source,
      cacheDir: null,
    })),
    { env: input.env, cache: false },
  );
  const summaryOf = new Map<string, SummarizedFile>();
  for (const s of after.summaries) {
    if (!changes.changed.has(s.file)) {
      summaryOf.set(s.file, renamed(s, `${input.rev}:${s.file}`));
    }
  }
  for (const s of beforeChanged.summaries) summaryOf.set(s.file.slice(input.rev.length + 1), s);
  const beforeSummaries = changes.files.flatMap((file) => summaryOf.get(file) ?? []);
  const crossFile = await readingSummaries(
    after,
    () => baseSideClashes(after, changes, summaryOf) ?? crossOrgProblems(beforeSummaries),
  );
  const ownProblems = beforeChanged.diagnostics.filter((d) => !beforeChanged.crossFile.includes(d));
  const beforeDiagnostics = sortDiagnostics([...ownProblems, ...crossFile]);
  input.report({ orgs: [], diagnostics: beforeDiagnostics });
  refuseErrors(beforeDiagnostics, `the org files at ${input.rev} have errors`);

  const changedAfter = after.orgs.filter((o) => changes.changed.has(o.file)).map((o) => o.state);
  const changedBefore = beforeChanged.orgs.map((o) => o.state);
  // An unchanged file has the same summary on both sides: the gateway and the set of orgs moved
  // exactly when the changed files' entries did, so only those are compared.
  const changedSide = (files: readonly SummarizedFile[], named: (file: string) => string) =>
    files.filter((f) => changes.changed.has(named(f.file))).map((f) => f.summary);
  const changedBeforeSummaries = changedSide(beforeChanged.summaries, (file) =>
    file.slice(input.rev.length + 1),
  );
  const changedAfterSummaries = changedSide(after.summaries, (file) => file);
  const gatewayMoved =
    JSON.stringify(changedBeforeSummaries.map((s) => s.gateway)) !==
    JSON.stringify(changedAfterSummaries.map((s) => s.gateway));
  const orgsMoved =
    changedBeforeSummaries.map((s) => s.context_prefix).join("\n") !==
    changedAfterSummaries.map((s) => s.context_prefix).join("\n");
  const fresh = beforeSummaries.length === 0;
  const [gatewayBefore, gatewayAfter] = await readingSummaries(after, () => [
    gatewayMoved ? gatewayOf(beforeSummaries, input.gateway) : null,
    gatewayMoved || fresh ? gatewayOf(after.summaries, input.gateway) : null,
  ]);
  const prefixesBefore = orgsMoved ? prefixesOf(beforeSummaries) : null;
  const prefixesAfter = orgsMoved || fresh ? prefixesOf(after.summaries) : null;
  const options = { includeRoot: input.includeRoot };
  // With no org at the revision there is nothing to compare with: everything is new.
  const before = fresh
    ? new Map<string, string>()
    : compilePartialTree(
        changedBefore,
        { gateway: gatewayBefore, prefixes: prefixesBefore },
        options,
      ).files;
  const afterTree = compilePartialTree(
    changedAfter,
    { gateway: gatewayAfter, prefixes: prefixesAfter },
    options,
  ).files;
  return {
    before,
    after: afterTree,
    impact: impactOf(changedBefore, changedAfter),
    orgs: after.orgs,
  };
}

/**
 * The revision's clashes across files from the claims index the working tree's check used:
 * the revision's files are the working tree's but for the changed ones, so only the changed
 * files' claims at the revision (and the files that clash with them or clashed when the index
 * was written) are looked up; every other file's claims are the index's (same name, same hash,
 * same text). Whether the revision was valid when it was merged is not assumed: the answer is
 * the same as checking every file of the revision (claims-index.ts), only cheaper. Null when
 * the working tree was not checked with an index (no cache, files in several directories).
 */
function baseSideClashes(
  after: OrgFilesLoad,
  changes: { files: readonly string[]; changed: ReadonlySet<string> },
  summaryOf: ReadonlyMap<string, SummarizedFile>,
): SourceDiagnostic[] | null {
  const first = after.summaries[0];
  if (!after.claims || first === undefined) return null;
  // The index names the files of one directory (the working tree's files all are in it).
  const dir = dirname(first.file);
  const headHash = new Map(after.claims.files.map((file) => [file.name, file.hash]));
  const files: RunFile[] = [];
  for (const file of changes.files) {
    if (dirname(file) !== dir) return null;
    const name = basename(file);
    files.push({
      name,
      hash: changes.changed.has(file) ? null : (headHash.get(name) ?? null),
      summarized: summaryOf.get(file) ?? null,
    });
  }
  return after.claims.index.problems(files);
}

function refuseErrors(diagnostics: readonly SourceDiagnostic[], message: string): void {
  if (diagnostics.some((d) => d.severity === "error")) throw new CommandFailure(message);
}

function gatewayOf(files: readonly SummarizedFile[], options: GatewayOptions): GatewayState {
  const orgs: GatewayOrg[] = [];
  for (const { summary } of files) if (summary.gateway) orgs.push(summary.gateway);
  return gatewayStateOf(orgs, options);
}

function prefixesOf(files: readonly SummarizedFile[]): string[] {
  return [...new Set(files.map((f) => keysOf(f).context_prefix))].sort();
}
