import { Flags } from "@oclif/core";
import type { CompiledFile } from "../../compiler/types.js";
import { EdgeNotApplied, EdgeRpcError, httpEdgeRpc } from "../../deploy/edge-apply.js";
import { deployEdge, type EdgeDeployResult } from "../../deploy/edge-files.js";
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
import { sayReloadWait } from "../lib/edge-flags.js";
import { ExitCode } from "../lib/exit-codes.js";
import { cacheFlag, orgPathsArgs } from "../lib/flags.js";
import { gatewayFlags } from "../lib/gateway-flags.js";
import { loadOrgFilesStep } from "../lib/load.js";
import { compileNodesEdge, type NodesFileEdge, nodesFileOf, nodesFlag } from "../lib/nodes-file.js";

export interface DeployCommandResult {
  etc: string;
  engine: string;
  orgs: number;
  units: number;
  changed: DeployRecordSummary[];
  reloads: { command: string; status: string }[];
  failed: number;
  durationMs: number;
  /** With --nodes: what was done to the edge (null: not touched, an engine unit failed). */
  edge?: EdgeOutcome | null;
}

/** deployEdge's result, or why the edge did not take the tables (configChanged then unknown). */
export type EdgeOutcome =
  | (EdgeDeployResult & { error: null })
  | { dir: string; configChanged: null; applied: null; error: string };

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
    "given: two sources of truth in one directory overwrite each other's orgs.\n\n" +
    "With a nodes file (--nodes: engine nodes, placements and the SIP edge), phones' AORs say " +
    "support_path=yes and, once every engine unit is deployed, the edge in the nodes file's " +
    "edge.data_dir is brought to it too: kamailio.cfg written when it differs (a running " +
    "Kamailio takes it only when restarted: said on stderr) and the routing tables pushed to the " +
    "running edge over JSON-RPC (127.0.0.1:edge.rpc_port) and read back, as `pbxctl edge apply` " +
    "does; --no-edge-push writes the files only (an edge not started yet loads them when it " +
    "starts). Exit 1 when the edge does not end up with the tables.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> orgs --etc /etc/asterisk/pbxctl --engine ami",
    "<%= config.bin %> <%= command.id %> orgs --etc ./var/asterisk --prune --json",
    "<%= config.bin %> <%= command.id %> orgs --etc /etc/asterisk/pbxctl --engine ami --nodes nodes.yaml",
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
    ...nodesFlag,
    "edge-push": Flags.boolean({
      default: true,
      allowNo: true,
      summary:
        "With --nodes: push the edge's tables to the running edge over JSON-RPC (--no-edge-push: write its files only).",
    }),
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
    const nodesFile = nodesFileOf(flags.nodes);
    let edge: NodesFileEdge | null = null;
    let edgeOutcome: EdgeOutcome | null = null;
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
              const states = orgs.map((o) => o.state);
              // The edge first: a nodes file with errors deploys nothing at all.
              edge = nodesFile
                ? await compileNodesEdge(nodesFile, states, (d) => this.printDiagnostics(d))
                : null;
              const tree = compileTree(
                states,
                { environment: flags.environment, staging_endpoint: flags["staging-endpoint"] },
                { behindEdge: nodesFile !== null },
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
          ...(nodesFile
            ? [
                {
                  title: "Edge",
                  run: async () => {
                    const outcome = await this.deployEdge(edge!, result!, flags["edge-push"]);
                    edgeOutcome = outcome;
                    if (outcome === null) return "Edge not touched: an engine unit failed";
                    if (outcome.error !== null) return `Edge in ${outcome.dir}: failed`;
                    return `Edge in ${outcome.dir}: ${outcome.applied ? "pushed and read back" : "files written"}`;
                  },
                },
              ]
            : []),
        ],
        progressMode(this.jsonEnabled()),
      );
    } finally {
      await target.close();
    }
    const outcome: DeployCommandResult = {
      ...summarize(etc, flags.engine, orgs.length, result!),
      ...(nodesFile ? { edge: edgeOutcome } : {}),
    };
    if (!this.jsonEnabled()) this.printSummary(outcome);
    const edgeFailed = outcome.edge?.error != null;
    return this.finish(outcome, outcome.failed > 0 || edgeFailed ? ExitCode.error : ExitCode.ok);
  }

  /**
   * After the engine units: the edge routes to what the nodes hold, so it is changed only once
   * every unit is deployed (null when one failed).
   */
  private async deployEdge(
    edge: NodesFileEdge,
    engine: TreeDeployResult,
    push: boolean,
  ): Promise<EdgeOutcome | null> {
    if (engine.failed.length > 0) return null;
    const dir = edge.listen.data_dir;
    const rpc = push ? httpEdgeRpc(`http://127.0.0.1:${edge.listen.rpc_port}/RPC`) : null;
    try {
      const deployed = await deployEdge(dir, edge.files, edge.tables, rpc, {
        onWait: sayReloadWait((line) => this.logToStderr(line)),
      });
      if (deployed.configChanged) {
        this.logToStderr(
          `${dir}/kamailio.cfg written: a running Kamailio takes it only when restarted`,
        );
      }
      return { ...deployed, error: null };
    } catch (error) {
      if (error instanceof EdgeRpcError || error instanceof EdgeNotApplied) {
        return { dir, configChanged: null, applied: null, error: error.message };
      }
      throw error;
    }
  }

  private printSummary(result: DeployCommandResult): void {
    this.printEngineSummary(result);
    const edge = result.edge;
    if (result.edge === null) this.log("edge: not touched (an engine unit failed)");
    if (!edge) return;
    if (edge.error !== null) {
      this.log(painter(colourEnabled())("red", `edge ${edge.dir}: ${edge.error}`));
    } else if (edge.applied) {
      const a = edge.applied;
      this.log(
        `edge ${edge.dir}: pushed and read back, ${a.orgKeysChanged} org and ${a.didKeysChanged} DID entries changed` +
          `${a.dispatcherReloaded ? ", nodes reloaded" : ""}${a.carriersReloaded ? ", carriers reloaded" : ""}`,
      );
    } else {
      this.log(`edge ${edge.dir}: files written, not pushed (--no-edge-push)`);
    }
  }

  private printEngineSummary(result: DeployCommandResult): void {
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
