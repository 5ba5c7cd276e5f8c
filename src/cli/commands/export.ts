import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Flags } from "@oclif/core";
import { exportOrg } from "../../domain/config/export.js";
import { isDomainError } from "../../domain/errors.js";
import { CommandFailure, PbxCommand } from "../lib/base-command.js";
import { openExistingStore } from "../lib/existing-store.js";

export interface ExportCommandResult {
  orgId: string;
  /** Where the file was written; null with `--out -` (printed on stdout). */
  file: string | null;
  /** Environment variables `pbxctl apply` of this file needs (trunk passwords). */
  secretsNeeded: string[];
}

export default class Export extends PbxCommand {
  static override summary = "Write an org from the store as YAML that validate and apply accept.";
  static override description =
    "Every field is written (defaults included) with the store's ids, so export -> apply -> " +
    "export gives the same bytes. No plaintext secret is written: users carry sip.md5_cred, " +
    "trunks password_env (a name derived from the org and trunk when the store holds the " +
    "password; set that variable before `pbxctl apply`). The file is <out>/<slug>.yaml (or " +
    "<id>.yaml for an org without a slug).";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --org acme",
    "<%= config.bin %> <%= command.id %> --org 4f1c2a9e-8b3d-4c7a-9e21-5d6f0a1b2c3d --out - > acme.yaml",
  ];
  static override flags = {
    org: Flags.string({ required: true, summary: "Org id or slug." }),
    out: Flags.string({ default: "orgs", summary: "Directory to write into, or - for stdout." }),
    "data-dir": Flags.directory({
      summary: "Data directory holding the store (env PBX_DATA_DIR, default ./var).",
    }),
  };

  async run(): Promise<ExportCommandResult> {
    const { flags } = await this.parse(Export);
    const store = await openExistingStore(flags["data-dir"]);
    try {
      const exported = await exportOrg(store.db, flags.org).catch((error: unknown) => {
        if (isDomainError(error)) throw new CommandFailure(error.message);
        throw error;
      });
      let file: string | null = null;
      if (flags.out === "-") {
        if (!this.jsonEnabled()) process.stdout.write(exported.yaml);
      } else {
        await mkdir(flags.out, { recursive: true });
        file = join(flags.out, exported.fileName);
        await writeFile(file, exported.yaml);
        if (!this.jsonEnabled()) this.logToStderr(`wrote ${file}`);
      }
      if (exported.secretsNeeded.length > 0 && !this.jsonEnabled()) {
        this.logToStderr(
          `to apply this file, set: ${exported.secretsNeeded.join(", ")} (trunk passwords)`,
        );
      }
      return { orgId: exported.orgId, file, secretsNeeded: exported.secretsNeeded };
    } finally {
      await store.db.destroy();
    }
  }
}
