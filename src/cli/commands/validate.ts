import { Flags } from "@oclif/core";
import { progressMode, runSteps } from "../../deploy/progress.js";
import type { SourceDiagnostic } from "../../model/diagnostic.js";
import { orgFilePaths } from "../../model/org-file-paths.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { ExitCode } from "../lib/exit-codes.js";
import { cacheFlag, orgPathsArgs } from "../lib/flags.js";
import { countProblems } from "../lib/load.js";
import { loadOrgFileList, type OrgFilesLoad } from "../lib/org-files.js";

export interface ValidateResult {
  files: string[];
  errors: number;
  warnings: number;
  diagnostics: SourceDiagnostic[];
}

export default class Validate extends PbxCommand {
  static override summary = "Check org YAML files and report every problem at file:line:col.";
  static override description =
    "Lint findings (docs/lint.md) are part of the output as warnings; --strict makes them " +
    "errors. Exit 0 when there is no error (warnings are printed), 1 when any file has an error.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs",
    "<%= config.bin %> <%= command.id %> orgs/acme.yaml orgs/globex.yaml --json",
  ];
  static override args = orgPathsArgs;
  static override strict = false;
  static override flags = {
    strict: Flags.boolean({
      summary: "Report lint findings as errors (exit 1 when there is one).",
    }),
    ...cacheFlag,
  };

  async run(): Promise<ValidateResult> {
    const { argv, flags } = await this.parse(this.constructor as typeof Validate);
    const paths = argv as string[];
    const files = await orgFilePaths(paths);
    if (files.length === 0) throw new CommandFailure(`no org files (*.yaml) in ${paths.join(" ")}`);
    let loaded!: OrgFilesLoad;
    await runSteps(
      [
        {
          title: `Check ${files.length} org file(s)`,
          run: async () => {
            loaded = await loadOrgFileList(files, {
              env: process.env,
              cache: flags.cache,
              lint: true,
              statesOf: new Set(),
            });
            return `Checked ${files.length} org file(s)`;
          },
        },
      ],
      progressMode(this.jsonEnabled()),
    );
    const findings = loaded.lint.map((d) =>
      flags.strict ? { ...d, severity: "error" as const } : d,
    );
    const diagnostics = [...loaded.diagnostics, ...findings];
    const result = { files, ...countProblems({ orgs: [], diagnostics }), diagnostics };
    this.printDiagnostics(diagnostics);
    if (!this.jsonEnabled()) {
      this.log(`${files.length} file(s): ${result.errors} error(s), ${result.warnings} warning(s)`);
    }
    return this.finish(result, result.errors > 0 ? ExitCode.error : ExitCode.ok);
  }
}
