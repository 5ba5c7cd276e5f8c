// Actions on a live call of the org (SPEC.md §4.5): today, hanging it up. The call is found in
// the live registry by the caller's org only, and the engine is asked to act on that org's own
// channels of it (rule 3): another org's call, or a channel of it the org does not own, is never
// touched, and is answered like an unknown call.
import { NotFound, Unavailable } from "./errors.js";
import type { LiveCallsView } from "./live-calls.js";

/** What the engine must do for call actions (the AMI connection of call tracking). */
export interface CallControlPort {
  /** Hangs up one channel by its engine name; rejects when the engine refuses or is away. */
  hangup(channel: string): Promise<void>;
}

export interface CallControlDeps {
  live: LiveCallsView;
  /** Absent when the server follows no engine (PBX_ENGINE none). */
  control: CallControlPort | null;
}

/** Engine channel names (`PJSIP/org_x_101-0000002a`, `Local/600@ctx-0001;2`): one printable token. */
const CHANNEL_NAME = /^[\x21-\x7e]{1,200}$/;

/** Hangs up every channel of the org's live call `linkedid`; 404 when it has none live. */
export async function hangupCall(
  deps: CallControlDeps,
  orgId: string,
  linkedid: string,
): Promise<{ success: true; channels: string[] }> {
  const call = deps.live.callOf(orgId, linkedid);
  if (!call) throw new NotFound("Call not found");
  if (!deps.control || !deps.live.tracking) {
    throw new Unavailable("The engine is not connected: live calls cannot be changed now");
  }
  const channels = call.channels.map((channel) => channel.channel);
  for (const channel of channels) {
    // Names come from the engine's own events, but they reach an AMI action field: never a
    // line break or a space, whatever an engine sent.
    if (!CHANNEL_NAME.test(channel)) throw new Error(`unexpected channel name from the engine`);
    await deps.control.hangup(channel);
  }
  return { success: true, channels };
}
