import { resolve } from "node:path";
import { Flags } from "@oclif/core";
import { type DeployLog, FileDeployLog } from "../../deploy/deploy-log.js";
import { Deployer, NoPreviousVersionError } from "../../deploy/deployer.js";
import { foreignOwnerReason, readOwner } from "../../deploy/ownership.js";
import { StoreDeployLog } from "../../deploy/store-deploy-log.js";
import { InvalidDeployPathError, orgUnit } from "../../deploy/units.js";
import { type DataStore, NoStoreError, openDataStore } from "../../domain/gitops.js";
import { createEngineTarget, ENGINE_KINDS, EngineConfigError } from "../../engine/index.js";
import { resolveGitopsEngineDir } from "../../engine/paths.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { ExitCode } from "../lib/exit-codes.js";

export interface RollbackCommandResult {
  unit: string;
  result: string;
  revision: string;
  filesWritten: string[];
  filesRemoved: string[];
  reloads: string[];
  error?: string;
}

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
  ];
  static override flags = {
    org: Flags.string({
      required: true,
      summary: "The org's context prefix (its directory under orgs/).",
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
    const etc = resolve(flags.etc ?? resolveGitopsEngineDir(process.env));
    const owner = await readOwner(etc);
    if (owner?.kind !== "store" && !flags.force) {
      const foreign = await foreignOwnerReason(etc, { kind: "files" });
      if (foreign) throw new CommandFailure(`${foreign}; pass --force to roll back anyway.`);
    }
    let store: DataStore | null = null;
    if (owner?.kind === "store") {
      store = await openDataStore(process.env, owner.dataDir, { create: false }).catch(
        (error: unknown) => {
          if (error instanceof NoStoreError) throw new CommandFailure(error.message);
          throw error;
        },
      );
    }
    const log: DeployLog = store ? new StoreDeployLog(store.db) : new FileDeployLog(etc);
    let target: ReturnType<typeof createEngineTarget>;
    try {
      target = createEngineTarget(process.env, flags.engine);
    } catch (error) {
      await store?.db.destroy();
      if (error instanceof EngineConfigError) throw new CommandFailure(error.message);
      throw error;
    }
    try {
      const deployer = new Deployer({ engineDir: etc, target, log });
      const record = await deployer.rollback(orgUnit(flags.org));
      const result: RollbackCommandResult = {
        unit: record.unit,
        result: record.result,
        revision: record.revision,
        filesWritten: record.filesWritten,
        filesRemoved: record.filesRemoved,
        reloads: record.reloads.map((outcome) => `${outcome.command} (${outcome.status})`),
        ...(record.error ? { error: record.error } : {}),
      };
      if (!this.jsonEnabled()) {
        this.log(
          `${record.unit}: rolled back to ${record.revision.slice(0, 12)} (${record.result})`,
        );
        const files = [
          ...record.filesWritten.map((f) => `+${f}`),
          ...record.filesRemoved.map((f) => `-${f}`),
        ];
        if (files.length > 0) this.log(`  files: ${files.join(" ")}`);
        if (result.reloads.length > 0) this.log(`  reloads: ${result.reloads.join(", ")}`);
        if (record.error) this.log(`  error: ${record.error}`);
      }
      return this.finish(result, record.result === "failed" ? ExitCode.error : ExitCode.ok);
    } catch (error) {
      if (error instanceof NoPreviousVersionError || error instanceof InvalidDeployPathError) {
        throw new CommandFailure(error.message);
      }
      throw error;
    } finally {
      await target.close();
      await store?.db.destroy();
    }
  }
}
