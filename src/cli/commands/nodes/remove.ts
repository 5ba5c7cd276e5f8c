import { deleteEngineNode } from "../../../domain/nodes/engine-nodes.js";
import { PbxCommand } from "../../lib/base-command.js";
import { nodeArg } from "../../lib/node-flags.js";
import { dataDirFlag, withNodeStore } from "../../lib/node-store.js";

export default class NodesRemove extends PbxCommand {
  static override summary = "Remove an engine node that holds no org.";
  static override description =
    "Refused while any org has the node as its primary or standby: place them elsewhere first.";
  static override examples = ["<%= config.bin %> <%= command.id %> node-3"];
  static override args = nodeArg;
  static override flags = { ...dataDirFlag };

  async run(): Promise<{ removed: string }> {
    const { args, flags } = await this.parse(NodesRemove);
    await withNodeStore(flags["data-dir"], (deps) => deleteEngineNode(deps, args.node));
    if (!this.jsonEnabled()) this.log(`removed engine node ${args.node}`);
    return { removed: args.node };
  }
}
