import { Flags } from "@oclif/core";
import {
  DEFAULT_REGISTER_EXPIRY,
  KAMAILIO_CFG,
  KAMAILIO_RUN_FLAGS,
  MIN_REGISTER_EXPIRY,
} from "../../../compiler/edge/index.js";
import { EdgeFilesExist, writeEdgeFiles } from "../../../deploy/edge-files.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";
import { compileStoreEdge, edgeDiagnosticLines, edgeFlags } from "../../lib/edge-flags.js";
import { dataDirFlag } from "../../lib/node-store.js";

export interface EdgeInitResult {
  dir: string;
  files: string[];
  sipListen: string;
  rpcUrl: string;
  nodes: number;
  orgs: number;
  dids: number;
  carriers: number;
}

export default class EdgeInit extends PbxCommand {
  static override summary =
    "Write the Kamailio SIP edge's config and routing tables from the store.";
  static override description =
    'Compiles the edge in front of the engine nodes (docs/beyond-one-machine.md, "The SIP edge") ' +
    "into --dir: kamailio.cfg (Kamailio 5.6: SIP on --sip-address:--sip-port, UDP and TCP; " +
    "JSON-RPC over HTTP on 127.0.0.1:--rpc-port), dispatcher.list (a set per engine node, probed " +
    "with OPTIONS every --probe-interval seconds) and db/ (db_text tables: org -> node sets, " +
    "DID -> org, carriers' source addresses). Nodes and placements come from the store " +
    "(`pbxctl nodes`); carriers are --carrier plus every trunk's identify match. Start Kamailio " +
    "with `kamailio -f <dir>/kamailio.cfg`. Refuses to overwrite files without --force, and to " +
    "write anything when an org cannot be routed (an error line says which).";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --dir /etc/kamailio/pbxctl --sip-address 203.0.113.10 --carrier 198.51.100.0/24",
  ];
  static override flags = {
    ...dataDirFlag,
    ...edgeFlags,
    "sip-address": Flags.string({
      required: true,
      summary: "IP address phones and carriers send SIP to (the edge listens there).",
    }),
    "sip-port": Flags.integer({ default: 5060, min: 1, max: 65535, summary: "SIP port." }),
    "probe-interval": Flags.integer({
      default: 10,
      min: 1,
      max: 3600,
      summary:
        "Seconds between OPTIONS probes of each node (a node is routed around after one failed probe).",
    }),
    "register-expiry": Flags.integer({
      default: DEFAULT_REGISTER_EXPIRY,
      min: MIN_REGISTER_EXPIRY,
      max: 86400,
      summary:
        "Longest registration a phone gets (seconds): after an org move, its phones are on the new node within it.",
    }),
    force: Flags.boolean({ default: false, summary: "Overwrite existing files." }),
  };

  async run(): Promise<EdgeInitResult> {
    const { flags } = await this.parse(EdgeInit);
    const result = await compileStoreEdge(
      flags["data-dir"],
      {
        sip_address: flags["sip-address"],
        sip_port: flags["sip-port"],
        rpc_port: flags["rpc-port"],
        data_dir: flags.dir,
        probe_interval: flags["probe-interval"],
        register_expiry: flags["register-expiry"],
      },
      flags.carrier ?? [],
    );
    for (const line of edgeDiagnosticLines(result)) this.logToStderr(line);
    if (result.diagnostics.some((d) => d.severity === "error")) {
      throw new CommandFailure("the edge was not written: fix the errors above first");
    }
    let files: string[];
    try {
      files = await writeEdgeFiles(flags.dir, result.files, flags.force);
    } catch (error) {
      if (error instanceof EdgeFilesExist) throw new CommandFailure(error.message);
      throw error;
    }
    const host = flags["sip-address"].includes(":")
      ? `[${flags["sip-address"]}]`
      : flags["sip-address"];
    const summary: EdgeInitResult = {
      dir: flags.dir,
      files,
      sipListen: `${host}:${flags["sip-port"]}`,
      rpcUrl: `http://127.0.0.1:${flags["rpc-port"]}/RPC`,
      nodes: result.tables.dispatcher.length,
      orgs: result.tables.orgs.size,
      dids: result.tables.dids.size,
      carriers: result.tables.carriers.length,
    };
    if (!this.jsonEnabled()) {
      this.log(`wrote ${files.join(", ")} in ${flags.dir}`);
      this.log(
        `${summary.nodes} nodes, ${summary.orgs} orgs, ${summary.dids} DID numbers, ${summary.carriers} carrier addresses`,
      );
      this.log(`SIP on ${summary.sipListen} (UDP and TCP); JSON-RPC on ${summary.rpcUrl}`);
      this.log(
        `start it with: kamailio -f ${flags.dir}/${KAMAILIO_CFG} ${KAMAILIO_RUN_FLAGS.join(" ")}`,
      );
    }
    return summary;
  }
}
