import { drainEngineNode, type EngineNodeView } from "../../../domain/nodes/engine-nodes.js";
import { PbxCommand } from "../../lib/base-command.js";
import { nodeArg } from "../../lib/node-flags.js";
import { dataDirFlag, withNodeStore } from "../../lib/node-store.js";
import { nodeLine } from "./list.js";

export default class NodesDrain extends PbxCommand {
  static override summary = "Drain an engine node: it keeps its orgs and is given no new one.";
  static override description =
    "Sets the node's state to draining. New orgs (and pins) go to other active nodes; the orgs " +
    "already on it stay until they are moved. `nodes update NODE --state active` undoes it.";
  static override examples = ["<%= config.bin %> <%= command.id %> node-1"];
  static override args = nodeArg;
  static override flags = { ...dataDirFlag };

  async run(): Promise<EngineNodeView> {
    const { args, flags } = await this.parse(NodesDrain);
    const node = await withNodeStore(flags["data-dir"], (deps) => drainEngineNode(deps, args.node));
    if (!this.jsonEnabled()) this.log(nodeLine(node));
    return node;
  }
}
