// Actions on a live call of the org (SPEC.md §4.5): hang up, blind transfer, hold and unhold. The call is found in
// the live registry by the caller's org only, and the engine is asked to act on that org's own
// channels of it (rule 3): another org's call, or a channel of it the org does not own, is never
// touched, and is answered like an unknown call.
import { orgNames } from "../../compiler/names.js";
import { internalContextHas } from "../../compiler/routing.js";
import type {
  CallControlPort,
  DialplanPlace,
  OriginateRequest,
} from "../../engine/ami-call-control.js";
import type { OrgState } from "../../model/org-state.js";
import { BadRequest, Conflict, NotFound, Unavailable } from "../errors.js";
import type { LiveCall, LiveCallsView } from "./live-calls.js";

// The port the engine adapter implements (src/engine/ami-call-control.ts), named here for the
// domain's callers.
export type { CallControlPort, DialplanPlace, OriginateRequest };

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

export interface HoldDeps extends CallControlDeps {
  /** The org's context prefix (`org_<id>_`): its channels and its internal context are named by it. */
  contextPrefix(orgId: string): Promise<string>;
}

export interface TransferDeps extends HoldDeps {
  /** The org's configuration as the compiler reads it (where a transfer target leads). */
  orgState(orgId: string): Promise<OrgState>;
}

/** The message when a transfer target is nowhere in the org's internal context. */
export function unreachableTargetMessage(to: string): string {
  return `${to} is not an extension of the org and no outbound route of the org matches it`;
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
  // The engine would accept a transfer to nowhere and drop the caller: refuse it first.
  if (!internalContextHas(await deps.orgState(orgId), request.to)) {
    throw new BadRequest(unreachableTargetMessage(request.to));
  }
  await deps.control.blindTransfer(transferer, orgNames(prefix).internal, request.to);
  return { success: true, channel: transferer, to: request.to };
}

/**
 * Channel variable, set on the org's phone leg while its call is on hold, naming the held party:
 * the engine itself keeps which two channels to bridge again (a restart of pbxctl loses nothing).
 */
export const HOLD_PEER_VARIABLE = "PBX_HOLD_PEER";

export interface HoldResult {
  success: true;
  /** The org's channel that put the call on hold (it waits in silence). */
  channel: string;
  /** The party on hold (it hears the org's music on hold). */
  held: string;
}

/** The org's phone leg an action works from: `channel` (one of the org's, in the call) or its answered phone. */
function phoneLeg(call: LiveCall, prefix: string, channel: string | undefined): string {
  let leg: string | undefined;
  if (channel !== undefined) {
    // Only a channel rule 3 gave to this org, in this call: never another org's leg.
    leg = call.channels.find((c) => c.channel === channel)?.channel;
    if (!leg) throw new NotFound("Channel not found in this call");
  } else {
    const phone = new RegExp(`^PJSIP/${escapeRegExp(prefix)}[0-9]+-`);
    leg = call.channels.find((c) => c.state === "Up" && phone.test(c.channel))?.channel;
    if (!leg) throw new Conflict("The call has no answered phone of the org");
  }
  if (!CHANNEL_NAME.test(leg)) throw new Error("unexpected channel name from the engine");
  return leg;
}

function liveCallFor(deps: CallControlDeps, orgId: string, linkedid: string) {
  const call = deps.live.callOf(orgId, linkedid);
  if (!call) throw new NotFound("Call not found");
  if (!deps.control || !deps.live.tracking) {
    throw new Unavailable("The engine is not connected: live calls cannot be changed now");
  }
  return { call, control: deps.control };
}

/**
 * Puts the org's live call `linkedid` on hold: the party bridged to the org's phone (or to
 * `channel`) goes to the org's holding context, where it hears the org's music on hold, and the
 * phone's leg waits there in silence (one AMI Redirect moves both out of their bridge). The phone
 * leg keeps the held party's name (HOLD_PEER_VARIABLE) for the unhold.
 */
export async function holdCall(
  deps: HoldDeps,
  orgId: string,
  linkedid: string,
  request: { channel?: string | undefined } = {},
): Promise<HoldResult> {
  const { call, control } = liveCallFor(deps, orgId, linkedid);
  const prefix = await deps.contextPrefix(orgId);
  const phone = phoneLeg(call, prefix, request.channel);
  const already = await control.getVariable(phone, HOLD_PEER_VARIABLE);
  if (already === null) throw new NotFound("Call not found");
  if (already !== "") throw new Conflict("The call is already on hold");
  const peer = await control.getVariable(phone, "BRIDGEPEER");
  if (peer === null) throw new NotFound("Call not found");
  // Nobody bridged (still ringing, in an IVR...), or a conference of more than two.
  if (peer === "" || peer.includes(",")) {
    throw new Conflict("The call is not connected to exactly one other party");
  }
  if (!CHANNEL_NAME.test(peer)) throw new Error("unexpected channel name from the engine");
  const hold = orgNames(prefix).hold;
  await control.setVariable(phone, HOLD_PEER_VARIABLE, peer);
  try {
    await control.redirect(
      peer,
      { context: hold, exten: "s" },
      { channel: phone, to: { context: hold, exten: "park" } },
    );
  } catch (error) {
    await control.setVariable(phone, HOLD_PEER_VARIABLE, "").catch(() => {});
    throw error;
  }
  return { success: true, channel: phone, held: peer };
}

/**
 * Takes the org's live call `linkedid` off hold: the org's leg that put it on hold (or
 * `channel`) and the party it holds are bridged again (AMI Bridge), which stops the music.
 */
export async function unholdCall(
  deps: HoldDeps,
  orgId: string,
  linkedid: string,
  request: { channel?: string | undefined } = {},
): Promise<HoldResult> {
  const { call, control } = liveCallFor(deps, orgId, linkedid);
  const candidates =
    request.channel === undefined
      ? call.channels.map((c) => c.channel)
      : [phoneLeg(call, await deps.contextPrefix(orgId), request.channel)];
  for (const phone of candidates) {
    if (!CHANNEL_NAME.test(phone)) continue;
    const held = await control.getVariable(phone, HOLD_PEER_VARIABLE);
    if (!held) continue;
    if (!CHANNEL_NAME.test(held)) throw new Error("unexpected channel name from the engine");
    const bridged = await control.bridge(phone, held);
    await control.setVariable(phone, HOLD_PEER_VARIABLE, "").catch(() => {});
    if (!bridged) throw new Conflict("The held party has hung up");
    return { success: true, channel: phone, held };
  }
  throw new Conflict("The call is not on hold");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
