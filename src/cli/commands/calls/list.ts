import { Flags } from "@oclif/core";
import { CALL_PAGE, type CallView, callHistory } from "../../../domain/calls.js";
import { isDomainError } from "../../../domain/errors.js";
import { findOrgId } from "../../../domain/export.js";
import { NoStoreError, openDataStore } from "../../../domain/gitops.js";
import type { LiveCallsView } from "../../../domain/live-calls.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";

export interface CallsListResult {
  org_id: string;
  total: number;
  calls: CallView[];
}

// The CLI reads the store, not a running engine: no call is known to be live.
const NOT_FOLLOWING: LiveCallsView = { callsOf: () => [], callOf: () => null, tracking: false };

const DIRECTIONS = ["inbound", "outbound", "internal"] as const;
const DISPOSITIONS = ["ANSWERED", "NO ANSWER", "BUSY", "FAILED", "CONGESTION"] as const;

export default class CallsList extends PbxCommand {
  static override summary = "List an org's call history from the store, one line per call.";
  static override description =
    "The same history as GET /calls/history (one call per linkedid, newest first, the same " +
    "filters and page limits), read from the server's store in the data directory.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --org acme",
    "<%= config.bin %> <%= command.id %> --org acme --direction inbound --disposition 'NO ANSWER' --from 2026-11-01T00:00:00Z --json",
  ];
  static override flags = {
    org: Flags.string({ required: true, summary: "Org id or slug." }),
    from: Flags.string({ summary: "Calls that started at or after (ISO 8601)." }),
    to: Flags.string({ summary: "Calls that started before (ISO 8601)." }),
    direction: Flags.option({ options: DIRECTIONS, summary: "inbound, outbound or internal." })(),
    disposition: Flags.option({
      options: DISPOSITIONS,
      summary: "The call's best outcome over its legs.",
    })(),
    extension: Flags.string({ summary: "A leg has this extension as source or destination." }),
    number: Flags.string({ summary: "3-20 digits found in the call's source or destination." }),
    limit: Flags.integer({
      default: CALL_PAGE.default,
      min: 1,
      max: CALL_PAGE.max,
      summary: `Calls to list (at most ${CALL_PAGE.max}).`,
    }),
    offset: Flags.integer({ default: 0, min: 0, summary: "Calls to skip." }),
    "data-dir": Flags.directory({
      summary: "Data directory holding the store (env PBX_DATA_DIR, default ./var).",
    }),
  };

  async run(): Promise<CallsListResult> {
    const { flags } = await this.parse(CallsList);
    for (const [name, value] of [
      ["from", flags.from],
      ["to", flags.to],
    ] as const) {
      if (value !== undefined && Number.isNaN(Date.parse(value))) {
        throw new CommandFailure(`--${name} must be an ISO 8601 time (got ${value})`);
      }
    }
    if (flags.number !== undefined && !/^[0-9]{3,20}$/.test(flags.number)) {
      throw new CommandFailure(`--number must be 3 to 20 digits (got ${flags.number})`);
    }
    if (flags.extension !== undefined && !/^[0-9*#+]{1,20}$/.test(flags.extension)) {
      throw new CommandFailure(`--extension must be 1 to 20 of 0-9 * # + (got ${flags.extension})`);
    }
    const store = await openDataStore(process.env, flags["data-dir"], { create: false }).catch(
      (error: unknown) => {
        if (error instanceof NoStoreError) throw new CommandFailure(error.message);
        throw error;
      },
    );
    try {
      const orgId = await findOrgId(store.db, flags.org).catch((error: unknown) => {
        if (isDomainError(error)) throw new CommandFailure(error.message);
        throw error;
      });
      const page = await callHistory({ db: store.db, live: NOT_FOLLOWING }, orgId, {
        ...(flags.from ? { from: new Date(flags.from).toISOString() } : {}),
        ...(flags.to ? { to: new Date(flags.to).toISOString() } : {}),
        ...(flags.direction ? { direction: flags.direction } : {}),
        ...(flags.disposition ? { disposition: flags.disposition } : {}),
        ...(flags.extension ? { extension: flags.extension } : {}),
        ...(flags.number ? { number: flags.number } : {}),
        limit: flags.limit,
        offset: flags.offset,
      });
      if (!this.jsonEnabled()) {
        for (const call of page.calls) {
          this.log(
            [
              call.calldate,
              call.direction.padEnd(8),
              call.disposition.padEnd(10),
              `${call.src} -> ${call.dst}`,
              `${call.billsec}s/${call.duration}s`,
              call.linkedid,
              call.recording_file ? "recorded" : "",
            ]
              .filter(Boolean)
              .join("  "),
          );
        }
        this.logToStderr(`${page.calls.length} of ${page.total} calls`);
      }
      return { org_id: orgId, total: page.total, calls: page.calls };
    } finally {
      await store.db.destroy();
    }
  }
}
