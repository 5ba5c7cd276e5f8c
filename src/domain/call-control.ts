// Actions on a live call of the org (SPEC.md §4.5): hang up, blind transfer. The call is found in
// the live registry by the caller's org only, and the engine is asked to act on that org's own
// channels of it (rule 3): another org's call, or a channel of it the org does not own, is never
// touched, and is answered like an unknown call.
import { orgNames } from "../compiler/names.js";
import { BadRequest, Conflict, NotFound, Unavailable } from "./errors.js";
import type { LiveCallsView } from "./live-calls.js";

/** What the engine must do for call actions (the AMI connection of call tracking). */
export interface CallControlPort {
  /** Hangs up one channel by its engine name; rejects when the engine refuses or is away. */
  hangup(channel: string): Promise<void>;
  /** Sends whatever is bridged to `channel` to context/exten (AMI BlindTransfer). */
  blindTransfer(channel: string, context: string, exten: string): Promise<void>;
  /** Places a call (AMI Originate, asynchronous: resolves once the engine queued it). */
  originate(request: OriginateRequest): Promise<void>;
}

/** One AMI Originate, every field already checked by the caller (src/domain/call-origination.ts). */
export interface OriginateRequest {
  /** The first leg, a Local channel into one of the org's contexts. */
  channel: string;
  /** Where the first leg continues once answered. */
  context: string;
  exten: string;
  /** Caller ID shown on the first leg. */
  callerId: string;
  /** Account code of the legs: the org id, so SPEC.md §1 rule 3 gives the call to the org. */
  account: string;
  /** Unique id of the first channel: it is also the call's linkedid. */
  channelId: string;
  /** Unique id of the Local channel's other half. */
  otherChannelId: string;
  timeoutMs: number;
  variables: Record<string, string>;
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

/** Where a call may be transferred: an extension of the org or a phone number, digits only. */
export const TRANSFER_TARGET = "^\\+?[0-9]{2,15}$";

export interface TransferDeps extends CallControlDeps {
  /** The org's context prefix (`org_<id>_`): its channels and its internal context are named by it. */
  contextPrefix(orgId: string): Promise<string>;
}

/**
 * Blind-transfers the org's live call `linkedid`: the party bridged to the org's phone (or to
 * `channel`, one of the org's channels of the call) is sent to `to` through the org's internal
 * context, so an extension rings like an internal call and a number leaves through the org's
 * outbound routes and caller-ID rules. The phone's own leg is then hung up by the engine.
 */
export async function transferCall(
  deps: TransferDeps,
  orgId: string,
  linkedid: string,
  request: { to: string; channel?: string | undefined },
): Promise<{ success: true; channel: string; to: string }> {
  const call = deps.live.callOf(orgId, linkedid);
  if (!call) throw new NotFound("Call not found");
  if (!new RegExp(TRANSFER_TARGET).test(request.to)) {
    throw new BadRequest("to must be an extension or a phone number (digits, optional +)");
  }
  if (!deps.control || !deps.live.tracking) {
    throw new Unavailable("The engine is not connected: live calls cannot be changed now");
  }
  const prefix = await deps.contextPrefix(orgId);
  const up = call.channels.filter((c) => c.state === "Up");
  let transferer: string | undefined;
  if (request.channel !== undefined) {
    // Only a channel rule 3 gave to this org, in this call: never another org's leg.
    transferer = call.channels.find((c) => c.channel === request.channel)?.channel;
    if (!transferer) throw new NotFound("Channel not found in this call");
  } else {
    // The org's answered phone: PJSIP/<prefix><extension>-<sequence>.
    const phone = new RegExp(`^PJSIP/${escapeRegExp(prefix)}[0-9]+-`);
    transferer = up.find((c) => phone.test(c.channel))?.channel;
    if (!transferer) throw new Conflict("The call has no answered phone of the org to transfer");
  }
  if (!CHANNEL_NAME.test(transferer)) throw new Error("unexpected channel name from the engine");
  await deps.control.blindTransfer(transferer, orgNames(prefix).internal, request.to);
  return { success: true, channel: transferer, to: request.to };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
