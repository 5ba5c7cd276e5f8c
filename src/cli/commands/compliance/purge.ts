import { randomUUID } from "node:crypto";
import { Flags } from "@oclif/core";
import { systemClock } from "../../../clock.js";
import {
  auditPurge,
  type PurgeReport,
  purgeAll,
  purgeOrg,
} from "../../../domain/compliance/retention.js";
import { resolveEnginePaths } from "../../../engine/paths.js";
import { PbxCommand } from "../../lib/base-command.js";
import { withStoredOrg } from "../../lib/stored-org.js";

export interface CompliancePurgeResult {
  dry_run: boolean;
  reports: PurgeReport[];
}

/** `kind=count, ...` of what a report deleted. */
function counts(report: PurgeReport): string {
  return Object.entries(report.kinds)
    .filter(([, kind]) => kind.days !== null)
    .map(([name, kind]) => `${name}=${kind.deleted}`)
    .join(", ");
}

export default class CompliancePurge extends PbxCommand {
  static override summary = "Apply the retention policies now: delete what orgs keep too long.";
  static override description =
    "What the server's daily purge does, on demand: for every org with a retention policy (or " +
    "the one --org names), deletes call records, recordings and audit records older than the " +
    "org's days per kind, and prints the counts per kind. Each org is purged alone; no org's " +
    "data is ever read for another. --dry-run counts and deletes nothing. Recordings are read " +
    "from PBX_RECORDINGS_DIR (default <data-dir>/recordings). A real purge appends one audit " +
    "record per org (actor cli).";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --dry-run",
    "<%= config.bin %> <%= command.id %> --org acme --json",
  ];
  static override flags = {
    org: Flags.string({ summary: "Org id or slug (default: every org with a policy)." }),
    "dry-run": Flags.boolean({ default: false, summary: "Count what would go; delete nothing." }),
    "data-dir": Flags.directory({
      summary: "Data directory holding the store (env PBX_DATA_DIR, default ./var).",
    }),
  };

  async run(): Promise<CompliancePurgeResult> {
    const { flags } = await this.parse(CompliancePurge);
    const dryRun = flags["dry-run"];
    const { recordingsDir, nodesDir } = resolveEnginePaths(process.env, flags["data-dir"]);
    return withStoredOrg(flags["data-dir"], flags.org, async (db, orgId) => {
      const context = { db, recordingsDir, nodesDir };
      const now = systemClock();
      const reports =
        orgId === null
          ? await purgeAll(context, now, dryRun)
          : [await purgeOrg(context, orgId, now, dryRun)];
      if (!dryRun) {
        const runId = randomUUID();
        for (const report of reports) {
          await auditPurge(
            db,
            now,
            report,
            { kind: "cli", id: null },
            "pbxctl compliance purge",
            runId,
          );
        }
      }
      if (!this.jsonEnabled()) {
        for (const report of reports) {
          this.log(
            `${report.org_id}: ${dryRun ? "would delete" : "deleted"} ${counts(report) || "nothing (no policy)"}`,
          );
        }
        if (reports.length === 0) this.log("no org has a retention policy");
      }
      return { dry_run: dryRun, reports };
    });
  }
}
