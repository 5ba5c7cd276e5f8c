// Call control over AMI: the actions on live channels (Hangup, BlindTransfer, Originate, Getvar,
// Setvar, Redirect, Bridge) sent on call tracking's events connection, and how the engine's
// answers read. The port's shape is here, beside the one adapter that speaks it; what a refusal
// means to an API caller is the domain's (src/domain/calls/engine-refusals.ts), passed in as
// `refused`, so this module imports nothing above the engine.
import type { AmiConnection, AmiMessage } from "./ami-connection.js";

/** Actions the call-control port sends. */
export type ControlAction =
  | "Originate"
  | "BlindTransfer"
  | "Redirect"
  | "Hangup"
  | "Bridge"
  | "Getvar"
  | "Setvar";

/** The engine's words for "that channel is not there (any more)". */
export const CHANNEL_GONE =
  /no such channel|does not exist: |channel specified does not exist|channel not up/i;

export interface DialplanPlace {
  context: string;
  exten: string;
}

/** One AMI Originate, every field already checked by the caller (src/domain/calls/call-origination.ts). */
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

/** What the engine must do for call actions (the AMI connection of call tracking). */
export interface CallControlPort {
  /** Hangs up one channel by its engine name; rejects when the engine refuses or is away. */
  hangup(channel: string): Promise<void>;
  /** Sends whatever is bridged to `channel` to context/exten (AMI BlindTransfer). */
  blindTransfer(channel: string, context: string, exten: string): Promise<void>;
  /** Places a call (AMI Originate, asynchronous: resolves once the engine queued it). */
  originate(request: OriginateRequest): Promise<void>;
  /** A channel variable or function (AMI Getvar): "" when unset, null when the channel is gone. */
  getVariable(channel: string, name: string): Promise<string | null>;
  /** Sets a channel variable (AMI Setvar); rejects with NotFound when the channel is gone. */
  setVariable(channel: string, name: string, value: string): Promise<void>;
  /**
   * Sends `channel` to context,exten,1 and, in the same action, `extra` to its own place (AMI
   * Redirect with ExtraChannel): two bridged channels leave their bridge together.
   */
  redirect(
    channel: string,
    to: DialplanPlace,
    extra: { channel: string; to: DialplanPlace },
  ): Promise<void>;
  /** Bridges two channels that are in the dialplan (AMI Bridge); false when one is gone. */
  bridge(channel1: string, channel2: string): Promise<boolean>;
}

/** The error to throw for the engine's refusal `message` of `action`. */
export type RefusalError = (action: ControlAction, message: string) => Error;

/** The call-control port over `events`, throwing `refused(action, message)` when the engine refuses. */
export function amiCallControl(events: AmiConnection, refused: RefusalError): CallControlPort {
  /** Throws for an engine refusal of `action`. */
  const expectSuccess = (answer: AmiMessage, action: ControlAction): void => {
    if (String(answer.response ?? "").toLowerCase() !== "error") return;
    throw refused(action, String(answer.message ?? ""));
  };
  return {
    async hangup(channel) {
      const answer = await events.action({ Action: "Hangup", Channel: channel });
      // A channel that hung up meanwhile is what was asked for.
      if (CHANNEL_GONE.test(String(answer.message ?? ""))) return;
      expectSuccess(answer, "Hangup");
    },
    async blindTransfer(channel, context, exten) {
      const answer = await events.action({
        Action: "BlindTransfer",
        Channel: channel,
        Context: context,
        Exten: exten,
      });
      // The call ended between the lookup and the action: answered like any call not live.
      expectSuccess(answer, "BlindTransfer");
    },
    async originate(request) {
      // Async: the answer says the engine queued the call, not that anyone picked up (a phone
      // may ring for its whole ring time; the API must not wait for it).
      const answer = await events.action({
        Action: "Originate",
        Channel: request.channel,
        Context: request.context,
        Exten: request.exten,
        Priority: "1",
        CallerID: request.callerId,
        Account: request.account,
        ChannelId: request.channelId,
        OtherChannelId: request.otherChannelId,
        Timeout: String(request.timeoutMs),
        Async: "true",
        // One header, comma-separated (Asterisk splits Variable values on commas); every
        // value was checked to be digits, `+` or a uuid before it got here.
        Variable: Object.entries(request.variables)
          .map(([name, value]) => `${name}=${value}`)
          .join(","),
      });
      expectSuccess(answer, "Originate");
    },
    async getVariable(channel, name) {
      const answer = await events.action({ Action: "Getvar", Channel: channel, Variable: name });
      if (CHANNEL_GONE.test(String(answer.message ?? ""))) return null;
      expectSuccess(answer, "Getvar");
      const value = answer.value;
      return typeof value === "string" ? value : "";
    },
    async setVariable(channel, name, value) {
      const answer = await events.action({
        Action: "Setvar",
        Channel: channel,
        Variable: name,
        Value: value,
      });
      expectSuccess(answer, "Setvar");
    },
    async redirect(channel, to, extra) {
      const answer = await events.action({
        Action: "Redirect",
        Channel: channel,
        Context: to.context,
        Exten: to.exten,
        Priority: "1",
        ExtraChannel: extra.channel,
        ExtraContext: extra.to.context,
        ExtraExten: extra.to.exten,
        ExtraPriority: "1",
      });
      expectSuccess(answer, "Redirect");
    },
    async bridge(channel1, channel2) {
      const answer = await events.action({
        Action: "Bridge",
        Channel1: channel1,
        Channel2: channel2,
        Tone: "no",
      });
      if (CHANNEL_GONE.test(String(answer.message ?? ""))) return false;
      expectSuccess(answer, "Bridge");
      return true;
    },
  };
}
