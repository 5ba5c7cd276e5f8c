// What the API answers when the engine refuses a call-control action (AMI Originate,
// BlindTransfer, Redirect, Hangup, Bridge; Getvar and Setvar of hold). Each refusal Asterisk 22
// gives (main/manager.c, the answers recorded in fixtures/ami/call-control.json) becomes a
// documented error, never a 500: a channel that is gone is the call ending meanwhile (404), a
// refusal about the call's state is a conflict (409), and anything else, a refusal pbxctl did not
// expect of what it sent, is the engine's answer passed on as 502.
import { CHANNEL_GONE, type ControlAction } from "../../engine/ami-call-control.js";
import { Conflict, type DomainError, EngineRefused, NotFound } from "../errors.js";

export type { ControlAction };

/** Refusals about the call's state, by action: the request was fine, the call is not. */
const CONFLICTS: Partial<Record<ControlAction, RegExp>> = {
  // The org's route (or the agent's extension) is not loaded yet: a deploy is pending or failed.
  Originate: /^Extension does not exist/i,
  BlindTransfer: /^Transfer (not permitted|invalid|failed)/i,
  Redirect: /^(Redirect failed|Secondary redirect failed)/i,
};

/** The documented error for the engine's refusal `message` of `action`. */
export function refusalError(action: ControlAction, message: string): DomainError {
  const text = message.trim() || "error";
  if (CHANNEL_GONE.test(text)) return new NotFound("Call not found");
  if (CONFLICTS[action]?.test(text)) {
    return new Conflict(`The engine refused ${action}: ${text}`);
  }
  return new EngineRefused(`The engine refused ${action}: ${text}`);
}
