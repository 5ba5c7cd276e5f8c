import {
  buildEdgeTables,
  type Diagnostic,
  EDGE_RELOAD_DELTA_S,
} from "../../../compiler/edge/index.js";
import {
  applyEdgeTables,
  type EdgeApplyResult,
  EdgeNotApplied,
  EdgeRpcError,
  httpEdgeRpc,
} from "../../../deploy/edge-apply.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";
import {
  edgeDiagnosticLines,
  edgeFlags,
  sayReloadWait,
  storeEdgeState,
} from "../../lib/edge-flags.js";
import { dataDirFlag } from "../../lib/node-store.js";

export default class EdgeApply extends PbxCommand {
  static override summary =
    "Bring a running edge's routing tables to the store, without a restart.";
  static override description =
    "Recompiles the edge's tables from the store (nodes, placements, DIDs, carriers), writes its " +
    "data files in --dir, then changes the running Kamailio over JSON-RPC (127.0.0.1:--rpc-port): " +
    "htable.sets/htable.delete for the org and DID entries that differ, dispatcher.reload when " +
    "the nodes changed, permissions.addressReload when the carriers did (a reload Kamailio refuses " +
    `as too soon after the last one is retried once its reload_delta, ${EDGE_RELOAD_DELTA_S} s, has passed). It reads every table ` +
    "back and exits 1 unless the running edge holds exactly what was compiled. Give the same " +
    "--carrier addresses as to `pbxctl edge init`.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --dir /etc/kamailio/pbxctl --carrier 198.51.100.0/24",
  ];
  static override flags = { ...dataDirFlag, ...edgeFlags };

  async run(): Promise<EdgeApplyResult> {
    const { flags } = await this.parse(EdgeApply);
    // Only the tables are applied; kamailio.cfg (listen addresses, probing) is edge init's, so
    // the listen part of the state is not read here beyond the data directory.
    const state = await storeEdgeState(
      flags["data-dir"],
      {
        sip_address: "0.0.0.0",
        sip_port: 5060,
        rpc_port: flags["rpc-port"],
        data_dir: flags.dir,
        probe_interval: 10,
      },
      flags.carrier ?? [],
    );
    const diagnostics: Diagnostic[] = [];
    const tables = buildEdgeTables(state, diagnostics);
    const result = { diagnostics };
    for (const line of edgeDiagnosticLines(result)) this.logToStderr(line);
    if (result.diagnostics.some((d) => d.severity === "error")) {
      throw new CommandFailure("nothing was applied: fix the errors above first");
    }
    const rpc = httpEdgeRpc(`http://127.0.0.1:${flags["rpc-port"]}/RPC`);
    let applied: EdgeApplyResult;
    try {
      applied = await applyEdgeTables(rpc, flags.dir, tables, {
        onWait: sayReloadWait((line) => this.logToStderr(line)),
      });
    } catch (error) {
      if (error instanceof EdgeRpcError || error instanceof EdgeNotApplied) {
        throw new CommandFailure(error.message);
      }
      throw error;
    }
    if (!this.jsonEnabled()) {
      this.log(
        `applied and read back: ${applied.orgKeysChanged} org entries and ${applied.didKeysChanged} DID entries changed` +
          `${applied.dispatcherReloaded ? ", nodes reloaded" : ""}${applied.carriersReloaded ? ", carriers reloaded" : ""}`,
      );
    }
    return applied;
  }
}
