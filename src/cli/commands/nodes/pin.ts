import { Args, Flags } from "@oclif/core";
import { findOrgId } from "../../../domain/config/export.js";
import { type PlacementView, pinOrg } from "../../../domain/nodes/placement.js";
import { PbxCommand } from "../../lib/base-command.js";
import { dataDirFlag, withNodeStore } from "../../lib/node-store.js";

export interface NodesPinResult extends PlacementView {
  org_id: string;
}

export default class NodesPin extends PbxCommand {
  static override summary = "Pin an org to an engine node (and choose or clear its standby).";
  static override description =
    "What PUT /admin/organizations/{id}/placement does: the node must be active with room " +
    "unless it already holds the org; the standby must be another node that is not down. " +
    "An org whose move is under way is not pinned: wait until the move is done.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> acme node-2",
    "<%= config.bin %> <%= command.id %> acme node-2 --standby node-3",
  ];
  static override args = {
    org: Args.string({ required: true, description: "Org id or slug." }),
    node: Args.string({ required: true, description: "The node's name (or id)." }),
  };
  static override flags = {
    standby: Flags.string({ summary: "The org's standby node.", exclusive: ["clear-standby"] }),
    "clear-standby": Flags.boolean({
      default: false,
      summary: "The org keeps no standby node.",
      exclusive: ["standby"],
    }),
    ...dataDirFlag,
  };

  async run(): Promise<NodesPinResult> {
    const { args, flags } = await this.parse(NodesPin);
    const standby = flags["clear-standby"] ? { standby_node: null } : {};
    const result = await withNodeStore(flags["data-dir"], async (deps) => {
      const orgId = await findOrgId(deps.db, args.org);
      const placement = await pinOrg(
        deps.db,
        orgId,
        { node: args.node, ...standby, ...(flags.standby ? { standby_node: flags.standby } : {}) },
        deps.clock().toISOString(),
      );
      return { org_id: orgId, ...placement };
    });
    if (!this.jsonEnabled()) {
      this.log(
        `${args.org} on ${result.node}${result.standby_node ? ` (standby ${result.standby_node})` : ""}`,
      );
    }
    return result;
  }
}
