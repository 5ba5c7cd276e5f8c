import { type EngineNodeView, listEngineNodes } from "../../../domain/nodes/engine-nodes.js";
import { PbxCommand } from "../../lib/base-command.js";
import { dataDirFlag, withNodeStore } from "../../lib/node-store.js";

export interface NodesListResult {
  nodes: EngineNodeView[];
}

/** One node as a terminal line. */
export function nodeLine(node: EngineNodeView): string {
  return [
    node.name.padEnd(16),
    node.state.padEnd(9),
    `${node.orgs}/${node.capacity} orgs`.padEnd(16),
    `${node.standby_orgs} standby`.padEnd(11),
    `ami ${node.ami_username}@${node.ami_host}:${node.ami_port}`,
    `sip ${node.sip_address}`,
  ].join("  ");
}

export default class NodesList extends PbxCommand {
  static override summary = "List the engine nodes with the orgs each holds.";
  static override description =
    "One line per node: name, state, orgs placed on it (primary) against its capacity, orgs " +
    "with it as standby, its AMI and SIP addresses. With no node defined, every org runs on the " +
    "one engine the server is configured with (PBX_ENGINE, PBX_AMI_*), as before nodes existed.";
  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    "<%= config.bin %> <%= command.id %> --json",
  ];
  static override flags = { ...dataDirFlag };

  async run(): Promise<NodesListResult> {
    const { flags } = await this.parse(NodesList);
    const nodes = await withNodeStore(flags["data-dir"], (deps) => listEngineNodes(deps));
    if (!this.jsonEnabled()) {
      for (const node of nodes) {
        this.log(nodeLine(node));
        if (node.problem) this.log(`  problem: ${node.problem}`);
      }
      if (nodes.length === 0) {
        this.log(
          "no engine node defined: every org runs on the one engine of the server's PBX_AMI_* settings",
        );
      }
    }
    return { nodes };
  }
}
