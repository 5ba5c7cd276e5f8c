import { Flags } from "@oclif/core";
import { NoPreviousVersionError } from "../../deploy/deployer.js";
import { type DeployRecordSummary, fileChanges } from "../../deploy/record-summary.js";
import { InvalidDeployPathError } from "../../deploy/units.js";
import {
  EngineDirOwnedError,
  gitopsEngineDir,
  rollbackOrg,
  UnknownOrgError,
} from "../../domain/config/engine-deploys.js";
import { NoStoreError } from "../../domain/config/gitops.js";
import { ENGINE_KINDS, EngineConfigError, EngineUnavailableError } from "../../engine/index.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { ExitCode } from "../lib/exit-codes.js";

export type RollbackCommandResult = Omit<DeployRecordSummary, "health">;

export default class Rollback extends PbxCommand {
  static override summary = "Restore an org's last good files and reload the engine.";
  static override description =
    "Before a deploy replaces files the engine had loaded, pbxctl keeps them " +
    "(.pbxctl/previous/ in the engine directory). Rollback deploys them back, diff-aware like any " +
    "deploy. The rollback is recorded where the directory's owner keeps its deploy log (a " +
    "server's store, or .pbxctl/ for `pbxctl deploy`), so `pbxctl status` shows the restored " +
    "revision as applied and the newer one as PENDING. A directory holding engine files no " +
    "pbxctl deploy recorded is refused unless --force is given. Exit 1 when there is nothing to " +
    "roll back to or the reload failed.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --org org_2f6c1e0a-0000-4000-8000-000000000001_ --etc /etc/asterisk/pbxctl --engine ami",
    "<%= config.bin %> <%= command.id %> --org acme --etc /var/lib/pbxctl/asterisk",
  ];
  static override flags = {
    org: Flags.string({
      required: true,
      summary:
        "The org: its context prefix (its directory under orgs/), its id, or its slug where a server's store owns the directory.",
    }),
    etc: Flags.directory({
      summary: "Engine config directory [default: PBX_ASTERISK_DIR or ./var/gitops-asterisk].",
    }),
    force: Flags.boolean({
      default: false,
      summary: "Roll back even in a directory holding files no pbxctl deploy recorded.",
    }),
    engine: Flags.option({
      options: ENGINE_KINDS,
      env: "PBX_ENGINE",
      default: "none" as const,
      summary: "Engine to reload: ami (PBX_AMI_* variables) or none (files only).",
    })(),
  };

  async run(): Promise<RollbackCommandResult> {
    const { flags } = await this.parse(Rollback);
    let summary: DeployRecordSummary;
    try {
      summary = await rollbackOrg({
        engineDir: gitopsEngineDir(process.env, flags.etc),
        org: flags.org,
        engineKind: flags.engine,
        env: process.env,
        force: flags.force,
      });
    } catch (error) {
      if (error instanceof EngineDirOwnedError) {
        throw new CommandFailure(`${error.reason}; pass --force to roll back anyway.`);
      }
      if (
        (error instanceof NoPreviousVersionError || error instanceof UnknownOrgError) &&
        flags.etc === undefined &&
        !process.env.PBX_ASTERISK_DIR
      ) {
        // The default directory is only `pbxctl deploy`'s: a server's is elsewhere.
        throw new CommandFailure(
          `${error.message}. That is the default directory of \`pbxctl deploy\`; pass --etc DIR ` +
            "(or set PBX_ASTERISK_DIR) for another, e.g. a server's <data-dir>/asterisk.",
        );
      }
      if (
        error instanceof NoStoreError ||
        error instanceof EngineConfigError ||
        error instanceof EngineUnavailableError ||
        error instanceof NoPreviousVersionError ||
        error instanceof UnknownOrgError ||
        error instanceof InvalidDeployPathError
      ) {
        throw new CommandFailure(error.message);
      }
      throw error;
    }
    const { health: _health, ...result } = summary;
    if (!this.jsonEnabled()) {
      this.log(`${result.unit}: rolled back to ${result.revision.slice(0, 12)} (${result.result})`);
      const files = fileChanges(result);
      if (files.length > 0) this.log(`  files: ${files.join(" ")}`);
      if (result.reloads.length > 0) this.log(`  reloads: ${result.reloads.join(", ")}`);
      if (result.error) this.log(`  error: ${result.error}`);
    }
    return this.finish(result, result.result === "failed" ? ExitCode.error : ExitCode.ok);
  }
}
