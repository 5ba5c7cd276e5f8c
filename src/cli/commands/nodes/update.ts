import { Flags } from "@oclif/core";
import { type EngineNodeView, updateEngineNode } from "../../../domain/nodes/engine-nodes.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";
import { nodeArg, nodeFieldFlags, nodeInputOf } from "../../lib/node-flags.js";
import { dataDirFlag, withNodeStore } from "../../lib/node-store.js";
import { nodeLine } from "./list.js";

export default class NodesUpdate extends PbxCommand {
  static override summary = "Change an engine node: only the fields given change.";
  static override description =
    "A new AMI secret replaces the sealed one. The capacity may not go below the orgs the node " +
    "holds. --state draining is what `nodes drain` does.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> node-1 --capacity 150",
    "<%= config.bin %> <%= command.id %> node-1 --rename node-a --state active",
  ];
  static override args = nodeArg;
  static override flags = {
    rename: Flags.string({ summary: "The node's new name." }),
    ...nodeFieldFlags,
    ...dataDirFlag,
  };

  async run(): Promise<EngineNodeView> {
    const { args, flags } = await this.parse(NodesUpdate);
    const input = {
      ...nodeInputOf(flags),
      ...(flags.rename !== undefined ? { name: flags.rename } : {}),
    };
    if (Object.keys(input).length === 0) {
      throw new CommandFailure("nothing to change: give at least one flag (see --help)");
    }
    const node = await withNodeStore(flags["data-dir"], (deps) =>
      updateEngineNode(deps, args.node, input),
    );
    if (!this.jsonEnabled()) this.log(nodeLine(node));
    return node;
  }
}
