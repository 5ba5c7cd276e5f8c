import { dirname } from "node:path";
import { Args, Flags } from "@oclif/core";
import { PbxCommand } from "../lib/base-command.js";
import { ExitCode } from "../lib/exit-codes.js";
import { cacheFlag } from "../lib/flags.js";
import { type FlowRun, flowFiles, flowRunFailed, formatFlowRun, runFlows } from "../lib/flows.js";
import { loadValidOrgs } from "../lib/load.js";

export default class Test extends PbxCommand {
  static override summary = "Check the flow assertions of a flows directory against the org files.";
  static override description =
    "Each flow calls a DID, presses digits and names the destinations the call must enter " +
    "(docs/flows.md). The org files are those beside the flows directory unless --orgs names " +
    "others. Exit 0 = every flow passes, 1 = a flow fails or a flow or org file has an error, " +
    "2 = usage (bad flags, no flow files).";
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs/flows",
    "<%= config.bin %> <%= command.id %> flows --orgs orgs --json",
  ];
  static override args = {
    dir: Args.directory({ required: true, description: "Directory of flow files (*.yaml)." }),
  };
  static override flags = {
    orgs: Flags.string({
      multiple: true,
      summary: "Org files or directories (default: the directory holding the flows directory).",
    }),
    ...cacheFlag,
  };

  async run(): Promise<FlowRun> {
    const { args, flags } = await this.parse(Test);
    const files = await flowFiles(args.dir).catch(() => []);
    if (files.length === 0) {
      this.error(`no flow files (*.yaml) in ${args.dir}`, { exit: ExitCode.usageOrChanges });
    }
    const orgPaths = flags.orgs ?? [dirname(args.dir)];
    const orgs = await loadValidOrgs(
      orgPaths,
      process.env,
      (r) => this.printDiagnostics(r.diagnostics),
      { cache: flags.cache },
    );
    const run = await runFlows(
      files,
      orgs.map((o) => o.state),
    );
    if (!this.jsonEnabled()) this.log(formatFlowRun(run));
    return this.finish(run, flowRunFailed(run) ? ExitCode.error : ExitCode.ok);
  }
}
