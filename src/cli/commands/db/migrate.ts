import { Flags } from "@oclif/core";
import { dataDirStore } from "../../../config.js";
import { migrateStore } from "../../../domain/operations/store-moves.js";
import { PbxCommand } from "../../lib/base-command.js";

export interface DbMigrateResult {
  store: "sqlite" | "postgres";
  applied: string[];
}

export default class DbMigrate extends PbxCommand {
  static override summary = "Bring the store's schema up to date.";
  static override description =
    "Runs every pending migration of the store (PBX_DATABASE_URL, else <data-dir>/pbx.db) and " +
    "prints their names. On PostgreSQL each migration is one transaction, under a lock, so two " +
    "replicas cannot migrate at once. For rolling upgrades: migrate once with the new version, " +
    "then start the new replicas with `serve --no-migrate` (docs/beyond-one-machine.md).";
  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    "PBX_DATABASE_URL=postgres://pbx@db/pbx <%= config.bin %> <%= command.id %> --json",
  ];
  static override flags = {
    "data-dir": Flags.directory({
      summary: "Data directory holding the SQLite store (env PBX_DATA_DIR, default ./var).",
    }),
  };

  async run(): Promise<DbMigrateResult> {
    const { flags } = await this.parse(DbMigrate);
    const location = dataDirStore(process.env, flags["data-dir"]);
    const applied = await migrateStore(location);
    if (!this.jsonEnabled()) {
      if (applied.length === 0) this.log("the store is up to date");
      for (const name of applied) this.log(`applied ${name}`);
    }
    return { store: location.kind, applied };
  }
}
