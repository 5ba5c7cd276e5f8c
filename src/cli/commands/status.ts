import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { Flags } from "@oclif/core";
import { dataDirStore, pjsipModeFrom } from "../../config.js";
import { FileDeployLog } from "../../deploy/deploy-log.js";
import { nodeEngineDir } from "../../deploy/node-runtime.js";
import { type UnitStatus, unitStatuses } from "../../deploy/status.js";
import { gatewayOptionsFrom } from "../../deploy/store-engine.js";
import { storeUnitStatuses } from "../../deploy/store-status.js";
import { resolveEnginePaths } from "../../engine/index.js";
import { resolveGitopsEngineDir } from "../../engine/paths.js";
import { listEngineNodes } from "../../store/engine-node-repository.js";
import {
  createPjsipRealtimeRepository,
  type PendingPjsipObject,
} from "../../store/pjsip-realtime-repository.js";
import { PbxCommand } from "../lib/base-command.js";
import { colourEnabled, painter } from "../lib/colour.js";
import { openExistingStore } from "../lib/existing-store.js";
import { StatusExitCode } from "../lib/exit-codes.js";
import { statusExitCode, statusTable } from "../lib/status-table.js";

export interface StatusCommandResult {
  /** `store`: the server's data directory; `files`: the deploy log of an engine directory. */
  source: "store" | "files";
  /** The data directory (store) or the engine directory (files) read. */
  from: string;
  /** The engine directory whose files were checked for drift. */
  engineDir: string;
  units: UnitStatus[];
  /**
   * PBX_PJSIP=realtime: the PJSIP objects whose rows changed and that the engine has not taken
   * yet (cache expiry or registrations reload still owed). Absent in file mode.
   */
  pjsipPending?: PendingPjsipObject[];
}

export default class Status extends PbxCommand {
  static override summary =
    "Show, per deploy unit, what the engine runs and how the last deploy went.";
  static override description =
    "For each unit (org, gateway, top-level include files): the desired revision (what the " +
    "configuration compiles to now), the applied revision (what the engine last loaded " +
    "successfully), the last deploy (when, result, reloads) and the engine's health after it. A " +
    "unit whose desired revision is not the applied one is marked PENDING (saved but not live); " +
    "a unit whose files on disk are not those the engine loaded (content hash per file) is marked " +
    "DRIFTED, with the files concerned. A file whose size, mtime and inode match the stamp taken " +
    "when pbxctl wrote it is not re-read unless --refresh is given.\n\n" +
    "Where it reads: with --data-dir, or when the data directory (PBX_DATA_DIR, default ./var) " +
    "holds a store and --etc is not given, the server's store (desired revisions compiled from " +
    "it); otherwise the deploy log (.pbxctl/) of the engine directory written by `pbxctl deploy`. " +
    "Org units also show the org's slug (from the store) or name (from its generated files).\n\n" +
    "With engine nodes defined (docs/nodes.md), the units are grouped by node: each node's " +
    "orgs, gateway and include files, from that node's deploy log and directory " +
    "(<PBX_NODES_DIR>/<node name>); `node` names it in --json.\n\n" +
    "With PBX_PJSIP=realtime, the PJSIP objects (endpoint, auth, aor, registration) whose rows " +
    "changed and that the engine has not taken yet are listed after the table, and count as " +
    "PENDING.\n\n" +
    "Exit code, the worst state of any unit: 0 all OK, 3 PENDING, 4 DRIFTED, 5 FAILED (1 an " +
    "error such as no store, 2 a usage error).";
  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    "<%= config.bin %> <%= command.id %> --data-dir /var/lib/pbxctl --json",
    "<%= config.bin %> <%= command.id %> --etc /etc/asterisk/pbxctl",
  ];
  static override flags = {
    etc: Flags.directory({
      summary:
        "Engine config directory of `pbxctl deploy` [default: PBX_ASTERISK_DIR or ./var/gitops-asterisk].",
      exclusive: ["data-dir"],
    }),
    "data-dir": Flags.directory({
      summary: "Data directory holding the server's store (env PBX_DATA_DIR, default ./var).",
    }),
    refresh: Flags.boolean({
      default: false,
      summary:
        "Re-read and hash every deployed file, even those whose size and mtime are unchanged.",
    }),
  };

  async run(): Promise<StatusCommandResult> {
    const { flags } = await this.parse(Status);
    const dataDir = resolve(flags["data-dir"] ?? (process.env.PBX_DATA_DIR || "./var"));
    // PBX_DATABASE_URL names a store whatever the data dir holds.
    const store = dataDirStore(process.env, dataDir);
    const useStore =
      flags["data-dir"] !== undefined ||
      (flags.etc === undefined && (store.kind === "postgres" || existsSync(store.file)));
    const options = { refresh: flags.refresh };
    const result = useStore
      ? await this.fromStore(dataDir, options)
      : await this.fromFiles(flags.etc, options);
    const pending = result.pjsipPending ?? [];
    if (!this.jsonEnabled()) {
      if (result.units.length === 0) this.log(`no deploys recorded in ${result.from}`);
      else for (const line of statusTable(result.units, painter(colourEnabled()))) this.log(line);
      if (pending.length > 0) {
        this.log(`PJSIP objects the engine has not taken yet (${pending.length}):`);
        for (const object of pending) {
          this.log(`  ${object.kind} ${object.id} (saved ${object.queuedAt})`);
        }
      }
    }
    const code = statusExitCode(result.units);
    return this.finish(
      result,
      pending.length > 0 && code === StatusExitCode.ok ? StatusExitCode.pending : code,
    );
  }

  private async fromStore(
    dataDir: string,
    options: { refresh: boolean },
  ): Promise<StatusCommandResult> {
    const store = await openExistingStore(dataDir);
    try {
      const paths = resolveEnginePaths(process.env, store.dataDir);
      const engineDir = paths.asteriskDir;
      const pjsip = pjsipModeFrom(process.env);
      const gateway = gatewayOptionsFrom(process.env);
      // With engine nodes (issue 25): each node's units, from its own deploy log and directory.
      const nodes = await listEngineNodes(store.db);
      const units =
        nodes.length === 0
          ? await storeUnitStatuses(
              store.db,
              gateway,
              { ...options, engineDir },
              paths.soundsDir,
              pjsip,
            )
          : (
              await Promise.all(
                nodes.map(async (node) =>
                  (
                    await storeUnitStatuses(
                      store.db,
                      gateway,
                      { ...options, engineDir: nodeEngineDir(paths.nodesDir, node.name) },
                      paths.soundsDir,
                      pjsip,
                      node.id,
                    )
                  ).map((unit) => ({ ...unit, node: node.name })),
                ),
              )
            ).flat();
      if (pjsip === "file") return { source: "store", from: store.dataDir, engineDir, units };
      const pjsipPending = await createPjsipRealtimeRepository(store.db).pending();
      return { source: "store", from: store.dataDir, engineDir, units, pjsipPending };
    } finally {
      await store.db.destroy();
    }
  }

  private async fromFiles(
    etcFlag: string | undefined,
    options: { refresh: boolean },
  ): Promise<StatusCommandResult> {
    const etc = resolve(etcFlag ?? resolveGitopsEngineDir(process.env));
    const units = await unitStatuses(new FileDeployLog(etc), new Map(), {
      ...options,
      engineDir: etc,
    });
    return { source: "files", from: etc, engineDir: etc, units };
  }
}
