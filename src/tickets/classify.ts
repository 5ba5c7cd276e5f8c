// The classification table of SPEC.md §4.7, as a pure function of one call (what the poller
// sends) and the org's AI-agent extensions. The repeat-caller row and the bot's 8 s wait are
// applied by the intake around it (they need the store and time).
import type { TicketSource } from "../store/ticket-tables.js";

/** One call as the poller sends it to the intake: the call's longest non-Local record. */
export interface IntakeCall {
  linkedid: string;
  uniqueid: string;
  /** The caller's channel. */
  channel: string;
  /** The channel that answered or was rung. */
  dstchannel: string;
  src: string;
  dst: string;
  /** The context the call ended in. */
  dcontext: string;
  lastapp: string;
  disposition: string;
  direction: string;
  duration: number;
  billsec: number;
  calldate: string;
}

export type Classification =
  | { kind: "ticket"; source: Exclude<TicketSource, "bot_dropped"> }
  /** Answered by an AI agent: a `bot_dropped` ticket unless one exists after the wait. */
  | { kind: "bot_candidate"; extension: string }
  | { kind: "skip"; reason: "not_inbound" | "human_answered" | "not_missed" };

/**
 * The extension that answered: the endpoint in `dstchannel` (`PJSIP/<prefix><ext>-<n>`; the
 * prefix ends in `_`), else the dialled number.
 */
export function answeringExtension(call: Pick<IntakeCall, "dstchannel" | "dst">): string {
  const match = /^[A-Za-z0-9]+\/(.+)-[0-9a-f]+(?:;\d)?$/.exec(call.dstchannel);
  if (match?.[1]) {
    const name = match[1];
    return name.slice(name.lastIndexOf("_") + 1);
  }
  return call.dst;
}

/** True when the call ended in a queue context (`<prefix>queue`, or the Queue application). */
export function queueInContext(call: Pick<IntakeCall, "dcontext" | "lastapp">): boolean {
  return /queue/i.test(call.dcontext) || call.lastapp === "Queue";
}

/** SPEC.md §4.7's table, first matching row, except the repeat caller (see intake.ts). */
export function classifyCall(call: IntakeCall, botExtensions: ReadonlySet<string>): Classification {
  if (call.direction !== "inbound") return { kind: "skip", reason: "not_inbound" };
  if (call.disposition === "NO ANSWER") {
    return { kind: "ticket", source: queueInContext(call) ? "queue_timeout" : "missed_call" };
  }
  if (call.disposition === "ANSWERED") {
    const extension = answeringExtension(call);
    if (botExtensions.has(extension)) return { kind: "bot_candidate", extension };
    return { kind: "skip", reason: "human_answered" };
  }
  return { kind: "skip", reason: "not_missed" };
}
