import { Flags } from "@oclif/core";
import { CompileRefused, compileToDirectory } from "../../deploy/compile-to-directory.js";
import { progressMode, runSteps } from "../../deploy/progress.js";
import type { LoadedOrg } from "../../model/files.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { cacheFlag, includeRootFlag, orgPathsArgs } from "../lib/flags.js";
import { gatewayFlags, gatewayOf } from "../lib/gateway-flags.js";
import { loadOrgFilesStep } from "../lib/load.js";

export interface CompileCommandResult {
  out: string;
  orgs: number;
  files: { path: string; bytes: number }[];
}

export default class Compile extends PbxCommand {
  static override summary = "Compile org YAML files into Asterisk configuration under --out.";
  static override description =
    "Validates every org first and writes nothing if any has an error. Compiles one org at a " +
    "time, overlapping writes with compiling, and writes each org's files " +
    "(orgs/<context_prefix>/), the gateway file and the top-level include files.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs --out /tmp/asterisk",
    "<%= config.bin %> <%= command.id %> orgs --out /tmp/asterisk --environment staging",
  ];
  static override args = orgPathsArgs;
  static override strict = false;
  static override flags = {
    out: Flags.directory({ required: true, summary: "Directory to write (created if missing)." }),
    ...gatewayFlags,
    ...includeRootFlag,
    ...cacheFlag,
  };

  async run(): Promise<CompileCommandResult> {
    const { argv, flags } = await this.parse(Compile);
    const includeRoot = flags["include-root"];
    let orgs: LoadedOrg[] = [];
    let compiled!: Awaited<ReturnType<typeof compileToDirectory>>;
    await runSteps(
      [
        loadOrgFilesStep(
          argv as string[],
          (r) => this.printDiagnostics(r.diagnostics),
          (loaded) => {
            orgs = loaded;
          },
          { cache: flags.cache },
        ),
        {
          title: `Compile into ${flags.out}`,
          run: async () => {
            compiled = await compileToDirectory(
              orgs.map((o) => o.state),
              gatewayOf(flags),
              flags.out,
              includeRoot === undefined ? {} : { includeRoot },
            ).catch((error: unknown) => {
              throw error instanceof CompileRefused ? new CommandFailure(error.message) : error;
            });
            return `Compiled ${compiled.files.length} file(s)`;
          },
        },
      ],
      progressMode(this.jsonEnabled()),
    );
    const { files: written, warnings } = compiled;
    for (const w of warnings) this.warn(`${w.path}: ${w.message}`);
    const bytes = written.reduce((sum, f) => sum + f.bytes, 0);
    this.log(
      `wrote ${written.length} file(s), ${bytes} bytes, for ${orgs.length} org(s) to ${flags.out}`,
    );
    return { out: flags.out, orgs: orgs.length, files: written };
  }
}
