import { Flags } from "@oclif/core";
import {
  copyIsExact,
  copySqliteToPostgres,
  StoreCopyError,
  type TableCopy,
} from "../../../domain/operations/store-moves.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";

export interface DbCopyResult {
  exact: boolean;
  tables: TableCopy[];
}

export default class DbCopy extends PbxCommand {
  static override summary = "Copy a SQLite store into an empty PostgreSQL database.";
  static override description =
    "Moves an install to PostgreSQL: migrates both stores to this version's schema, refuses a " +
    "target holding any row, copies every table in one transaction, then reads every table back " +
    "from both sides and prints its row count and checksum (SHA-256 of each row's values, " +
    "summed, the same computation on both sides). Exits 1 when any table differs. Stop the " +
    "server first so nothing is written to the SQLite file during the copy; the data " +
    "directory's secrets (server-key, jwt-secret) must move with the install.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --from var/pbx.db --to postgres://pbx@db.internal/pbx",
  ];
  static override flags = {
    from: Flags.file({ required: true, summary: "The SQLite store (<data-dir>/pbx.db)." }),
    to: Flags.string({ required: true, summary: "postgres:// URL of an empty database." }),
  };

  async run(): Promise<DbCopyResult> {
    const { flags } = await this.parse(DbCopy);
    let tables: TableCopy[];
    try {
      tables = await copySqliteToPostgres(flags.from, flags.to);
    } catch (error) {
      if (error instanceof StoreCopyError) throw new CommandFailure(error.message);
      throw error;
    }
    const exact = copyIsExact(tables);
    if (!this.jsonEnabled()) {
      const width = Math.max(...tables.map((t) => t.table.length));
      this.log(`${"table".padEnd(width)}  ${"rows".padStart(9)}  checksum (source = target)`);
      for (const t of tables) {
        const same = t.sourceRows === t.targetRows && t.sourceChecksum === t.targetChecksum;
        const rows =
          t.sourceRows === t.targetRows ? `${t.sourceRows}` : `${t.sourceRows}->${t.targetRows}`;
        const sums = same
          ? t.sourceChecksum.slice(0, 16)
          : `${t.sourceChecksum.slice(0, 16)} != ${t.targetChecksum.slice(0, 16)}`;
        this.log(
          `${t.table.padEnd(width)}  ${rows.padStart(9)}  ${sums}${same ? "" : "  DIFFERS"}`,
        );
      }
      this.log(
        exact
          ? `copied ${tables.length} tables: every count and checksum equal`
          : "the copy differs",
      );
    }
    return this.finish({ exact, tables }, exact ? 0 : 1);
  }
}
