import { Flags } from "@oclif/core";
import { noEngineEventsHint } from "../../../domain/calls/call-tail.js";
import { CALL_FILTER_PATTERNS, type CallView, callHistory } from "../../../domain/calls/calls.js";
import type { LiveCallsView } from "../../../domain/calls/live-calls.js";
import { PAGE_LIMITS } from "../../../domain/page-window.js";
import { CALL_DIRECTIONS, CALL_DISPOSITIONS } from "../../../model/call-outcomes.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";
import { withStoredOrg } from "../../lib/stored-org.js";

export interface CallsListResult {
  org_id: string;
  total: number;
  calls: CallView[];
}

// The CLI reads the store, not a running engine: no call is known to be live.
const NOT_FOLLOWING: LiveCallsView = { callsOf: () => [], callOf: () => null, tracking: false };

/** One call as a terminal line. */
function callLine(call: CallView): string {
  return [
    call.calldate,
    call.direction.padEnd(8),
    call.disposition.padEnd(10),
    `${call.src} -> ${call.dst}`,
    `${call.billsec}s/${call.duration}s`,
    call.linkedid,
    call.recording_file ? "recorded" : "",
  ]
    .filter(Boolean)
    .join("  ");
}

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
    direction: Flags.option({
      options: CALL_DIRECTIONS,
      summary: "inbound, outbound or internal.",
    })(),
    disposition: Flags.option({
      options: CALL_DISPOSITIONS,
      summary: "The call's best outcome over its legs.",
    })(),
    extension: Flags.string({ summary: "A leg has this extension as source or destination." }),
    number: Flags.string({ summary: "3-20 digits found in the call's source or destination." }),
    limit: Flags.integer({
      default: PAGE_LIMITS.defaultSize,
      min: 1,
      max: PAGE_LIMITS.maxSize,
      summary: `Calls to list (at most ${PAGE_LIMITS.maxSize}).`,
    }),
    offset: Flags.integer({
      default: 0,
      min: 0,
      max: PAGE_LIMITS.maxOffset,
      summary: "Calls to skip.",
    }),
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
    for (const name of ["extension", "number"] as const) {
      const value = flags[name];
      const { pattern, rule } = CALL_FILTER_PATTERNS[name];
      if (value !== undefined && !new RegExp(pattern).test(value)) {
        throw new CommandFailure(`--${name} must be ${rule} (got ${value})`);
      }
    }
    return withStoredOrg(flags["data-dir"], flags.org, async (db, orgId) => {
      const page = await callHistory({ db, live: NOT_FOLLOWING }, orgId!, {
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
        for (const call of page.calls) this.log(callLine(call));
        this.logToStderr(`${page.calls.length} of ${page.total} calls`);
        const hint = page.total === 0 ? await noEngineEventsHint(db) : null;
        if (hint) this.logToStderr(hint);
      }
      return { org_id: orgId!, total: page.total, calls: page.calls };
    });
  }
}
