import { Args, Flags } from "@oclif/core";
import {
  backupStore,
  DATA_DIR_SECRETS,
  StoreBackupError,
  type StoreBackupResult,
} from "../../../domain/operations/store-backup.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";
import { openExistingStore } from "../../lib/existing-store.js";

export default class DbBackup extends PbxCommand {
  static override summary = "Copy the store into FILE while the server runs.";
  static override description =
    "A consistent copy of the SQLite store (<data-dir>/pbx.db) made with SQLite's online backup " +
    "API: the server keeps serving, the copy is one committed state, and it is checked with " +
    "PRAGMA integrity_check before it is named FILE (a failed copy leaves no FILE). To restore, " +
    "stop the server, put FILE in place as <data-dir>/pbx.db (removing pbx.db-wal and " +
    "pbx.db-shm) beside the data directory's secret files (jwt-secret, server-key, " +
    "admin-password.hash: created once, copy them once), and start it. A PostgreSQL store is " +
    "backed up with pg_dump instead (docs/operating.md).";
  static override examples = [
    "<%= config.bin %> <%= command.id %> /backups/pbx-$(date +%F).db --data-dir /var/lib/pbxctl",
  ];
  static override args = {
    file: Args.string({ required: true, description: "Where the copy is written." }),
  };
  static override flags = {
    "data-dir": Flags.directory({
      summary: "Data directory holding the store (env PBX_DATA_DIR, default ./var).",
    }),
    force: Flags.boolean({ default: false, summary: "Overwrite FILE if it exists." }),
  };

  async run(): Promise<StoreBackupResult> {
    const { args, flags } = await this.parse(DbBackup);
    const store = await openExistingStore(flags["data-dir"]);
    try {
      const result = await backupStore(store, args.file, { overwrite: flags.force }).catch(
        (error: unknown) => {
          if (error instanceof StoreBackupError) throw new CommandFailure(error.message);
          throw error;
        },
      );
      if (!this.jsonEnabled()) {
        this.log(
          `backed up ${store.dbFile} to ${result.file}: ${result.bytes} bytes, integrity ${result.integrity}`,
        );
        this.log(
          `a restore also needs ${DATA_DIR_SECRETS.join(", ")} from ${result.dataDir} (they never change: copy them once)`,
        );
      }
      return result;
    } finally {
      await store.db.destroy();
    }
  }
}
