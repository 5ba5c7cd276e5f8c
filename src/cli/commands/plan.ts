import { Errors, Flags } from "@oclif/core";
import type { OrgImpact } from "../../compiler/impact.js";
import type { OrgState } from "../../model/org-state.js";
import { PbxCommand } from "../lib/base-command.js";
import { compileTree, readManagedTree } from "../lib/compiled-tree.js";
import { ExitCode } from "../lib/exit-codes.js";
import { cacheFlag, includeRootFlag, orgPathsArgs } from "../lib/flags.js";
import { flowFiles, flowRunFailed, flowsDirsFor, runFlows } from "../lib/flows.js";
import { gatewayFlags, gatewayOf } from "../lib/gateway-flags.js";
import { loadValidOrgs } from "../lib/load.js";
import { compileNodesFile, nodesFileOf, nodesFlag, readEdgeTree } from "../lib/nodes-file.js";
import { formatPlan, type PlanResult, planTrees } from "../lib/plan.js";
import { basePlanTrees } from "../lib/plan-base.js";

export default class Plan extends PbxCommand {
  static override summary = "Show what a deploy of the org YAML files would change (unified diff).";
  static override description =
    "With --against, compares the compiled configuration with an engine config directory; with " +
    "--base, compares the configuration the files compiled to at a git revision with the " +
    "working tree. Prints the diff and the engine reloads the change needs; with --base, above " +
    "the diff, one plain line per change callers would notice and a summary per org. When a `flows` " +
    "directory sits beside the org files, its flow assertions are checked against the new " +
    "configuration. With --against and a nodes file (--nodes), " +
    "the SIP edge's files under edge/ are compared too. Exit 0 = no change, 2 = changes, 1 = error or a failing flow (like " +
    "terraform plan -detailed-exitcode; usage errors are 1 here too).";
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs --against /etc/asterisk",
    "<%= config.bin %> <%= command.id %> orgs --base origin/main",
  ];
  static override args = orgPathsArgs;
  static override strict = false;
  static override flags = {
    against: Flags.directory({
      summary: "Engine config directory to compare with (only pbxctl-managed files are read).",
      exclusive: ["base"],
      atLeastOne: ["against", "base"],
    }),
    base: Flags.string({
      summary: "Git revision whose org files are compared with the working tree.",
      exclusive: ["against"],
    }),
    ...gatewayFlags,
    ...includeRootFlag,
    ...cacheFlag,
    ...nodesFlag,
  };

  async run(): Promise<PlanResult> {
    const { argv, flags } = await this.parse(Plan);
    const paths = argv as string[];
    const gateway = gatewayOf(flags);
    const options = { includeRoot: flags["include-root"] };
    const report = (r: { diagnostics: Parameters<PbxCommand["printDiagnostics"]>[0] }) =>
      this.printDiagnostics(r.diagnostics);
    // Flow assertions beside the org files must hold for what would be deployed: they need
    // every org's state, which --base otherwise reads only for the orgs that changed.
    const flowFilesFound = (await Promise.all(flowsDirsFor(paths).map(flowFiles))).flat();
    let before: Map<string, string>;
    let after: Map<string, string>;
    let afterOrgs: OrgState[];
    let impact: OrgImpact[] | undefined;
    if (flags.base !== undefined) {
      const trees = await basePlanTrees({
        paths,
        rev: flags.base,
        env: process.env,
        cache: flags.cache,
        gateway,
        includeRoot: flags["include-root"],
        allStates: flowFilesFound.length > 0,
        report,
      });
      ({ before, after, impact } = trees);
      afterOrgs = trees.orgs.map((o) => o.state);
    } else {
      afterOrgs = (await loadValidOrgs(paths, process.env, report, { cache: flags.cache })).map(
        (o) => o.state,
      );
      const nodesFile = nodesFileOf(flags.nodes);
      after = compileTree(afterOrgs, gateway, { ...options, behindEdge: nodesFile !== null }).files;
      before = await readManagedTree(flags.against!);
      if (nodesFile) {
        const edge = await compileNodesFile(nodesFile, afterOrgs, (d) => this.printDiagnostics(d));
        for (const file of edge) after.set(file.path, file.content);
        const paths = edge.map((file) => file.path);
        for (const [path, text] of await readEdgeTree(flags.against!, paths))
          before.set(path, text);
        after = new Map([...after].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
        before = new Map([...before].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      }
    }
    const plan: PlanResult = planTrees(before, after);
    // Only --base has the org files on both sides; an engine directory holds compiled files.
    if (impact !== undefined) plan.impact = impact;
    if (flowFilesFound.length > 0) plan.flows = await runFlows(flowFilesFound, afterOrgs);
    if (!this.jsonEnabled()) {
      // --base compares two revisions of the YAML, never the engine: "up to date" would claim
      // something about the engine that was not looked at.
      this.log(
        !plan.changed && flags.base !== undefined
          ? `No changes between the org files at ${flags.base} and the working tree: nothing to ` +
              "compare. (The engine was not read; --against <engine dir> shows what a deploy would change.)"
          : formatPlan(plan),
      );
    }
    if (plan.flows && flowRunFailed(plan.flows)) return this.finish(plan, ExitCode.error);
    return this.finish(plan, plan.changed ? ExitCode.usageOrChanges : ExitCode.ok);
  }

  // Exit 2 means "changes" here, so a usage error must not look like one.
  protected override async catch(err: Error & { exitCode?: number }): Promise<unknown> {
    if (err instanceof Errors.CLIError && !(err instanceof Errors.ExitError)) {
      if (err.oclif.exit === ExitCode.usageOrChanges) err.oclif.exit = ExitCode.error;
    }
    return super.catch(err);
  }
}
