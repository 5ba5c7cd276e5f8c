import { setTimeout as sleep } from "node:timers/promises";
import { Flags } from "@oclif/core";
import {
  formatTailedEvent,
  noEngineEventsHint,
  tailCallEvents,
} from "../../../domain/calls/call-tail.js";
import { PbxCommand } from "../../lib/base-command.js";
import { withStoredOrg } from "../../lib/stored-org.js";

export interface CallsTailResult {
  /** Events printed before the command ended (Ctrl-C, or the end with --no-follow). */
  events: number;
}

export default class CallsTail extends PbxCommand {
  // Each event is printed as it arrives (JSON lines with --json), not one document at the end.
  static override enableJsonFlag = false;
  static override summary = "Follow the engine's call events as the server stores them.";
  static override description =
    "Prints the last --lines call events (new channels, state changes, dials, bridges, queue " +
    "steps, hangups), then each new one as the server stores it, until Ctrl-C, like " +
    "`kubectl logs -f`. It reads the server's store in the data directory (the server must run " +
    "with PBX_ENGINE=ami to record events), so it needs no credential and no engine connection " +
    "and shows exactly what tenant isolation rule 3 gave to each org. Without --org, every org's " +
    "events are shown with the org's id.";
  static override examples = [
    "<%= config.bin %> <%= command.id %> --org acme",
    "<%= config.bin %> <%= command.id %> --json | jq 'select(.event == \"Hangup\")'",
  ];
  static override flags = {
    org: Flags.string({ summary: "Org id or slug (default: every org)." }),
    lines: Flags.integer({ default: 10, min: 0, summary: "Stored events to show first." }),
    follow: Flags.boolean({
      default: true,
      allowNo: true,
      summary: "Keep printing new events (--no-follow: print the last --lines and exit).",
    }),
    interval: Flags.integer({
      default: 500,
      min: 50,
      summary: "Milliseconds between reads of the store while nothing new arrives.",
    }),
    json: Flags.boolean({ summary: "One JSON object per event and line." }),
    "data-dir": Flags.directory({
      summary: "Data directory holding the store (env PBX_DATA_DIR, default ./var).",
    }),
  };

  async run(): Promise<CallsTailResult> {
    const { flags } = await this.parse(CallsTail);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    const pause = (signal?: AbortSignal) =>
      sleep(flags.interval, undefined, signal ? { signal } : {}).catch(() => {});
    try {
      return await withStoredOrg(flags["data-dir"], flags.org, async (db, orgId) => {
        let events = 0;
        // Said once, before waiting: a files-only server never stores an event to follow.
        const hint = flags.json ? null : await noEngineEventsHint(db);
        if (hint) this.logToStderr(hint);
        for await (const event of tailCallEvents({
          db,
          orgId,
          lines: flags.lines,
          follow: flags.follow,
          signal: stop.signal,
          pause,
        })) {
          this.log(flags.json ? JSON.stringify(event) : formatTailedEvent(event, orgId === null));
          events++;
        }
        return { events };
      });
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  }
}
