import { Flags } from "@oclif/core";
import type { CompiledFile } from "../../compiler/types.js";
import { progressMode, runSteps } from "../../deploy/progress.js";
import {
  type DeployRecordSummary,
  fileChanges,
  summarizeRecord,
} from "../../deploy/record-summary.js";
import { deployTree, type TreeDeployResult } from "../../deploy/tree.js";
import {
  EngineDirOwnedError,
  gitopsEngineDir,
  openFilesDeployer,
} from "../../domain/config/engine-deploys.js";
import { ENGINE_KINDS, EngineConfigError, EngineUnavailableError } from "../../engine/index.js";
import type { LoadedOrg } from "../../model/files.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { colourEnabled, painter } from "../lib/colour.js";
import { compileTree } from "../lib/compiled-tree.js";
import { ExitCode } from "../lib/exit-codes.js";
import { cacheFlag, orgPathsArgs } from "../lib/flags.js";
import { gatewayFlags } from "../lib/gateway-flags.js";
import { loadOrgFilesStep } from "../lib/load.js";

export interface DeployCommandResult {
  etc: string;
  engine: string;
  orgs: number;
  units: number;
  changed: DeployRecordSummary[];
  reloads: { command: string; status: string }[];
  failed: number;
  durationMs: number;
}

export default class Deploy extends PbxCommand {
  static override summary =
    "Compile org YAML files and deploy what changed into the engine directory.";
  static override description =
    "Pure GitOps, no store: loads and validates every org (nothing is written if one has an " +
    "error), compiles them with the gateway and the top-level include files, then deploys each " +
    "unit (an org, the gateway, the include files): only files whose content changed are written " +
    "(atomically), and only the engine modules whose files changed are reloaded, one reload at a " +
    "time. Pass every org file (a directory): the include files list exactly the orgs given. " +
    "Exit 1 when a unit failed.\n\n" +
    "A directory a server's store deploys into (`pbxctl serve`, `pbxctl apply`), or one holding " +
    "engine files no pbxctl deploy recorded, is refused with the owner's name unless --force is " +
    "given: two sources of truth in one directory overwrite each other's orgs.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs --etc /etc/asterisk/pbxctl --engine ami",
    "<%= config.bin %> <%= command.id %> orgs --etc ./var/asterisk --prune --json",
  ];
  static override args = orgPathsArgs;
  static override strict = false;
  static override flags = {
    etc: Flags.directory({
      summary:
        "Engine config directory to deploy into [default: PBX_ASTERISK_DIR or ./var/gitops-asterisk].",
    }),
    force: Flags.boolean({
      default: false,
      summary: "Deploy even into a directory a server's store (or another source) owns.",
    }),
    engine: Flags.option({
      options: ENGINE_KINDS,
      env: "PBX_ENGINE",
      default: "none" as const,
      summary: "Engine to reload: ami (PBX_AMI_* variables) or none (files only).",
    })(),
    prune: Flags.boolean({
      default: false,
      summary:
        "Remove the files of orgs that are in the engine directory but not in the given YAML.",
    }),
    ...gatewayFlags,
    ...cacheFlag,
  };

  async run(): Promise<DeployCommandResult> {
    const { argv, flags } = await this.parse(Deploy);
    const etc = gitopsEngineDir(process.env, flags.etc);
    let opened: Awaited<ReturnType<typeof openFilesDeployer>>;
    try {
      opened = await openFilesDeployer({
        engineDir: etc,
        engineKind: flags.engine,
        env: process.env,
        force: flags.force,
      });
    } catch (error) {
      if (error instanceof EngineDirOwnedError) {
        throw new CommandFailure(
          `${error.reason}; deploying YAML here would overwrite its files. Deploy into another ` +
            "directory (--etc) or pass --force to overwrite anyway.",
        );
      }
      if (error instanceof EngineConfigError || error instanceof EngineUnavailableError) {
        throw new CommandFailure(error.message);
      }
      throw error;
    }
    const { deployer, target } = opened;
    let orgs: LoadedOrg[] = [];
    let files: CompiledFile[] = [];
    let result: TreeDeployResult | undefined;
    try {
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
            title: "Compile",
            run: async () => {
              const tree = compileTree(
                orgs.map((o) => o.state),
                { environment: flags.environment, staging_endpoint: flags["staging-endpoint"] },
              );
              for (const w of tree.warnings) this.warn(`${w.path}: ${w.message}`);
              files = [...tree.files].map(([path, content]) => ({ path, content }));
              return `Compiled ${files.length} file(s)`;
            },
          },
          {
            title: `Deploy into ${etc} (engine: ${flags.engine})`,
            run: async (report) => {
              result = await deployTree(deployer, files, {
                prune: flags.prune,
                onUnit: (record, done, total) => {
                  if (record.result !== "unchanged")
                    report(`${done}/${total} ${record.unit}: ${record.result}`);
                },
              });
              return `Deployed ${result.records.length} unit(s): ${result.changed.length} changed, ${result.failed.length} failed`;
            },
          },
        ],
        progressMode(this.jsonEnabled()),
      );
    } finally {
      await target.close();
    }
    const outcome = summarize(etc, flags.engine, orgs.length, result!);
    if (!this.jsonEnabled()) this.printSummary(outcome);
    return this.finish(outcome, outcome.failed > 0 ? ExitCode.error : ExitCode.ok);
  }

  private printSummary(result: DeployCommandResult): void {
    if (result.changed.length === 0) {
      this.log(
        `no change: ${result.units} unit(s) already deployed, nothing written, nothing reloaded`,
      );
      return;
    }
    const paint = painter(colourEnabled());
    for (const unit of result.changed) {
      const files = fileChanges(unit);
      const shown = paint(unit.result === "failed" ? "red" : "green", unit.result);
      this.log(`${unit.unit}: ${shown} ${unit.revision.slice(0, 12)}`);
      if (files.length > 0) this.log(`  files: ${files.join(" ")}`);
      if (unit.reloads.length > 0) this.log(`  reloads: ${unit.reloads.join(", ")}`);
      if (unit.health) this.log(`  engine: ${unit.health}`);
      if (unit.error) this.log(paint("red", `  error: ${unit.error}`));
    }
    this.log(
      `${result.changed.length} of ${result.units} unit(s) changed, ${result.failed} failed, ` +
        `${result.reloads.length} reload(s), ${result.durationMs} ms`,
    );
  }
}

function summarize(
  etc: string,
  engine: string,
  orgs: number,
  result: TreeDeployResult,
): DeployCommandResult {
  return {
    etc,
    engine,
    orgs,
    units: result.records.length,
    changed: result.changed.map(summarizeRecord),
    reloads: result.reloads,
    failed: result.failed.length,
    durationMs: result.durationMs,
  };
}
