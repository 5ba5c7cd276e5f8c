// Which call and queue webhooks (SPEC.md §6) one newly stored journey event means for its org.
// Pure: it is given the org's steps of the call stored before this one, so replaying an event
// (which the store refuses as a duplicate) never reaches here, and the "first time" of each
// lifecycle step is decided from the store itself, not from memory lost on a restart.
import type { JourneyEvent } from "../../engine/call-events.js";
import type { WebhookEvent } from "../../webhooks/events.js";

/** What the function needs of an earlier stored step of the same call and org. */
export interface PriorStep {
  uniqueid: string;
  event: string;
  state: string;
}

export interface CallWebhook {
  type: WebhookEvent;
  data: Record<string, unknown>;
}

/** Hangup causes (Q.850) that end a call normally even when nobody answered it. */
const NORMAL_CAUSES = new Set(["16", "19"]); // normal clearing, no answer

/** The engine's `<epoch>.<micros>` as ISO 8601 UTC. */
export function engineTime(timestamp: string): string {
  const [seconds = "0", micros = "0"] = timestamp.split(".");
  return new Date(
    Number(seconds) * 1000 + Math.floor(Number(micros.padEnd(6, "0")) / 1000),
  ).toISOString();
}

function isRinging(step: { event: string; state: string }): boolean {
  return step.event.toLowerCase() === "dialbegin" || step.state === "Ringing";
}

function isAnswered(step: { state: string }): boolean {
  return step.state === "Up";
}

/** The fields every call webhook carries. */
function callData(event: JourneyEvent): Record<string, unknown> {
  return {
    call_id: event.linkedid,
    uniqueid: event.uniqueid,
    channel: event.channel,
    from: event.callerIdNum,
    to: event.exten,
    at: engineTime(event.timestamp),
  };
}

function queueData(event: JourneyEvent): Record<string, unknown> {
  const { detail } = event;
  const number = (key: string) => (detail[key] === undefined ? null : Number(detail[key]));
  return {
    call_id: event.linkedid,
    uniqueid: event.uniqueid,
    channel: event.channel,
    from: event.callerIdNum,
    queue: detail.queue ?? "",
    at: engineTime(event.timestamp),
    ...(event.event.toLowerCase() === "queuecallerjoin" ? { position: number("position") } : {}),
    ...(event.event.toLowerCase() === "queuecallerabandon"
      ? { position: number("position"), hold_time: number("holdtime") }
      : {}),
    ...(event.event.toLowerCase() === "agentconnect"
      ? {
          member: detail.membername ?? "",
          agent_channel: detail.destchannel ?? "",
          hold_time: number("holdtime"),
          ring_time: number("ringtime"),
        }
      : {}),
  };
}

const QUEUE_EVENTS: Readonly<Record<string, WebhookEvent>> = {
  queuecallerjoin: "queue.entered",
  queuecallerabandon: "queue.abandoned",
  agentconnect: "queue.answered",
};

/**
 * The webhooks `event` (just stored for its org) means, given the org's steps of the call that
 * were stored before it. For each org and call: `call.initiated` at its first step,
 * `call.ringing` at the first dial or ringing channel, `call.answered` when a channel first goes
 * Up, and when the last of the org's channels hangs up `call.ended` (answered, or ended with a
 * normal cause) or `call.failed` (busy, unavailable, congestion...). Queue events map 1:1.
 */
export function callWebhooksOf(event: JourneyEvent, prior: readonly PriorStep[]): CallWebhook[] {
  const out: CallWebhook[] = [];
  const name = event.event.toLowerCase();
  const queueType = QUEUE_EVENTS[name];
  if (queueType) out.push({ type: queueType, data: queueData(event) });
  if (prior.length === 0) out.push({ type: "call.initiated", data: callData(event) });
  if (isRinging(event) && !prior.some(isRinging)) {
    out.push({ type: "call.ringing", data: callData(event) });
  }
  const answeredBefore = prior.some(isAnswered);
  if (isAnswered(event) && !answeredBefore) {
    out.push({ type: "call.answered", data: callData(event) });
  }
  if (name === "hangup") {
    const hungUp = new Set(
      prior.filter((s) => s.event.toLowerCase() === "hangup").map((s) => s.uniqueid),
    );
    hungUp.add(event.uniqueid);
    const open = prior.some((s) => !hungUp.has(s.uniqueid));
    if (!open) {
      const cause = event.detail.cause ?? "";
      const answered = answeredBefore || isAnswered(event);
      const failed = !answered && !NORMAL_CAUSES.has(cause);
      out.push({
        type: failed ? "call.failed" : "call.ended",
        data: {
          ...callData(event),
          answered,
          hangup_cause: cause === "" ? null : Number(cause),
          hangup_cause_text: event.detail["cause-txt"] ?? null,
        },
      });
    }
  }
  return out;
}
