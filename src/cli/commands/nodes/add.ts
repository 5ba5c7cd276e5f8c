import { Flags } from "@oclif/core";
import { createEngineNode, type EngineNodeView } from "../../../domain/nodes/engine-nodes.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";
import { nodeArg, nodeFieldFlags, nodeInputOf } from "../../lib/node-flags.js";
import { dataDirFlag, withNodeStore } from "../../lib/node-store.js";
import { nodeLine } from "./list.js";

export default class NodesAdd extends PbxCommand {
  static override summary = "Add an engine node (the first one takes every existing org).";
  static override description =
    "Adds an Asterisk node pbxctl deploys to. The AMI secret is stored sealed under the server " +
    "key and never shown again. An install's first node takes every org that exists (they ran " +
    "on the one implicit engine, which this node now names), so its capacity must hold them; " +
    "later orgs go to the least-loaded active node with room.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> node-1 --ami-host 10.0.0.11 --ami-user pbxctl --ami-secret-file ./node-1.secret --sip-address 10.0.0.11:5060 --capacity 100",
  ];
  static override args = nodeArg;
  static override flags = {
    ...nodeFieldFlags,
    "ami-user": Flags.string({ required: true, summary: nodeFieldFlags["ami-user"].summary }),
    "sip-address": Flags.string({
      required: true,
      summary: nodeFieldFlags["sip-address"].summary,
    }),
    capacity: Flags.integer({ required: true, min: 1, summary: nodeFieldFlags.capacity.summary }),
    ...dataDirFlag,
  };

  async run(): Promise<EngineNodeView> {
    const { args, flags } = await this.parse(NodesAdd);
    const input = nodeInputOf(flags);
    if (input.ami_secret === undefined) {
      throw new CommandFailure("give the node's AMI secret: --ami-secret or --ami-secret-file");
    }
    const node = await withNodeStore(flags["data-dir"], (deps) =>
      createEngineNode(deps, {
        ...input,
        name: args.node,
        ami_username: flags["ami-user"],
        ami_secret: input.ami_secret!,
        sip_address: flags["sip-address"],
        capacity: flags.capacity,
      }),
    );
    if (!this.jsonEnabled()) this.log(nodeLine(node));
    return node;
  }
}
