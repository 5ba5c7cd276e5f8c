import { Flags } from "@oclif/core";
import { FileDeployLog } from "../../deploy/deploy-log.js";
import { type UnitStatus, unitStatuses } from "../../deploy/status.js";
import { resolveEnginePaths } from "../../engine/index.js";
import { PbxCommand } from "../lib/base-command.js";

export interface StatusCommandResult {
  etc: string;
  units: UnitStatus[];
}

export default class Status extends PbxCommand {
  static override summary =
    "Show, per deploy unit, what the engine runs and how the last deploy went.";
  static override description =
    "Reads the deploy log of the engine directory (.pbxctl/): for each unit (org, gateway, top-level " +
    "include files) the applied revision (what the engine last loaded successfully), the last " +
    "deploy (when, result, reloads) and the engine's health after it. A unit whose last deployed " +
    "revision is not the applied one is marked PENDING (saved but not live).";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --etc /etc/asterisk/pbxctl",
    "<%= config.bin %> <%= command.id %> --json",
  ];
  static override flags = {
    etc: Flags.directory({
      summary: "Engine config directory [default: PBX_ASTERISK_DIR or ./var/asterisk].",
    }),
  };

  async run(): Promise<StatusCommandResult> {
    const { flags } = await this.parse(Status);
    const etc = flags.etc ?? resolveEnginePaths(process.env).asteriskDir;
    const units = await unitStatuses(new FileDeployLog(etc));
    if (!this.jsonEnabled()) {
      if (units.length === 0) this.log(`no deploys recorded in ${etc}`);
      for (const unit of units) this.log(formatStatus(unit));
    }
    return { etc, units };
  }
}

function formatStatus(unit: UnitStatus): string {
  const applied = unit.appliedRevision ? unit.appliedRevision.slice(0, 12) : "(none)";
  const last = unit.lastDeploy;
  const parts = [unit.unit.padEnd(24), `applied ${applied}`];
  if (last) parts.push(`last ${last.result} ${last.at} (${last.trigger})`);
  if (unit.health) parts.push(`engine ${unit.health.status}`);
  if (unit.pending)
    parts.push(`PENDING ${(unit.desiredRevision ?? last?.revision ?? "").slice(0, 12)} not live`);
  if (last?.error) parts.push(`error: ${last.error}`);
  return parts.join("  ");
}
