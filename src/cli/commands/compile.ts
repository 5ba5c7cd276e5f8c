import { join } from "node:path";
import { Flags } from "@oclif/core";
import { writeFileAtomic } from "../../atomic-files.js";
import { CompileRefused, compileToDirectory } from "../../deploy/compile-to-directory.js";
import { progressMode, runSteps } from "../../deploy/progress.js";
import type { LoadedOrg } from "../../model/files.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { cacheFlag, includeRootFlag, orgPathsArgs } from "../lib/flags.js";
import { gatewayFlags, gatewayOf } from "../lib/gateway-flags.js";
import { loadOrgFilesStep } from "../lib/load.js";
import { compileNodesFile, nodesFileOf, nodesFlag } from "../lib/nodes-file.js";

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
    "(orgs/<context_prefix>/), the gateway file and the top-level include files. With a nodes " +
    "file (--nodes: engine nodes, placements and the SIP edge), " +
    "also the Kamailio edge under edge/ (kamailio.cfg, dispatcher.list, db/), and phones' AORs " +
    "say support_path=yes since they register through the edge.";
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
    ...nodesFlag,
  };

  async run(): Promise<CompileCommandResult> {
    const { argv, flags } = await this.parse(Compile);
    const includeRoot = flags["include-root"];
    let orgs: LoadedOrg[] = [];
    let compiled!: Awaited<ReturnType<typeof compileToDirectory>>;
    const nodesFile = nodesFileOf(flags.nodes);
    const edgeFiles: { path: string; bytes: number }[] = [];
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
            const states = orgs.map((o) => o.state);
            // The edge first: a nodes file with errors writes nothing at all.
            const edge = nodesFile
              ? await compileNodesFile(nodesFile, states, (d) => this.printDiagnostics(d))
              : [];
            compiled = await compileToDirectory(states, gatewayOf(flags), flags.out, {
              ...(includeRoot === undefined ? {} : { includeRoot }),
              behindEdge: nodesFile !== null,
            }).catch((error: unknown) => {
              throw error instanceof CompileRefused ? new CommandFailure(error.message) : error;
            });
            for (const file of edge) {
              await writeFileAtomic(join(flags.out, file.path), file.content);
              edgeFiles.push({ path: file.path, bytes: Buffer.byteLength(file.content) });
            }
            return `Compiled ${compiled.files.length + edgeFiles.length} file(s)`;
          },
        },
      ],
      progressMode(this.jsonEnabled()),
    );
    const { warnings } = compiled;
    const written = [...compiled.files, ...edgeFiles];
    for (const w of warnings) this.warn(`${w.path}: ${w.message}`);
    const bytes = written.reduce((sum, f) => sum + f.bytes, 0);
    this.log(
      `wrote ${written.length} file(s), ${bytes} bytes, for ${orgs.length} org(s) to ${flags.out}`,
    );
    return { out: flags.out, orgs: orgs.length, files: written };
  }
}
