// Caller ID resolution for outbound calls, SPEC.md §4.5 rules 1-6, in one place: the compiler
// prints rules 2-5 into each org's caller context (resolveUserCallerId), and the API's call
// operations add rule 1 (a caller_id in the request) and rule 6 (AI originate needs a DID) on
// top of the very same function (resolveCallerId), so the two can never disagree.
import type { OrgState, User } from "./org-state.js";
import { gatewayRangeCheck, internationalDigits, toE164 } from "./phone.js";
import { findDid, isUsableDid } from "./refs.js";

/** Where a resolved caller ID came from, for comments in generated files and for tests. */
export type CallerIdSource =
  | "request"
  | "user_outbound_did"
  | "org_default_did"
  | "first_assigned_did"
  | "none";

export interface ResolvedCallerId {
  /** What goes on the wire: a number in the owned range, or the sentinel. */
  number: string;
  source: CallerIdSource;
  /** The DID the rules chose, before the gateway range check (null when there was none). */
  chosen: string | null;
}

/** The org's fallback DID: the default one, else the first usable one by number ascending. */
export function orgFallbackDid(state: OrgState): { number: string; source: CallerIdSource } | null {
  const usable = state.dids.filter(isUsableDid);
  const preferred = usable.find((d) => d.is_default);
  if (preferred) return { number: preferred.number, source: "org_default_did" };
  const first = [...usable].sort((a, b) =>
    compareAscii(internationalDigits(a.number), internationalDigits(b.number)),
  )[0];
  return first ? { number: first.number, source: "first_assigned_did" } : null;
}

/** Rules 2-5 for one user: their outbound_did, the org default, the first DID, then the range check. */
export function resolveUserCallerId(state: OrgState, user: User | null): ResolvedCallerId {
  if (user?.outbound_did) {
    const did = findDid(state, user.outbound_did);
    if (did && isUsableDid(did)) {
      return {
        number: gatewayRangeCheck(did.number),
        source: "user_outbound_did",
        chosen: did.number,
      };
    }
  }
  const fallback = orgFallbackDid(state);
  if (fallback) {
    return {
      number: gatewayRangeCheck(fallback.number),
      source: fallback.source,
      chosen: fallback.number,
    };
  }
  return { number: gatewayRangeCheck(""), source: "none", chosen: null };
}

/**
 * The channel variable through which an API call operation hands its rule 1 caller ID to the
 * org's outbound routes: set only by our own AMI Originate (phones and trunks cannot set channel
 * variables), never inherited (no `_` prefix), and checked by resolveCallerId before it is set.
 */
export const REQUEST_CALLER_ID_VARIABLE = "PBX_REQUEST_CID";

/** Why no caller ID could be resolved: SPEC.md §7's message for each. */
export type CallerIdRefusal = "caller_id_not_assigned" | "no_caller_id_available";

export interface CallerIdRequest {
  /** `caller_id` of the API request (rule 1), as the client sent it. */
  callerId?: string | null | undefined;
  /** The user the call is placed for (rule 2): the click-to-call extension, the AI agent. */
  user: User | null;
  /** Rule 6 (originate-to-ai): refuse rather than fall back to the sentinel. */
  requireDid?: boolean;
}

/**
 * Rules 1-6 for one call: a valid request caller_id (an assigned, active DID of the org, as
 * E.164) wins, else rules 2-5 exactly as the compiled dialplan applies them.
 */
export function resolveCallerId(
  state: OrgState,
  request: CallerIdRequest,
): ResolvedCallerId | { refused: CallerIdRefusal } {
  if (request.callerId !== undefined && request.callerId !== null) {
    const did = findDid(state, request.callerId);
    if (!did || !isUsableDid(did) || !/[0-9]/.test(request.callerId)) {
      return { refused: "caller_id_not_assigned" };
    }
    const e164 = toE164(request.callerId);
    return { number: gatewayRangeCheck(e164), source: "request", chosen: e164 };
  }
  const resolved = resolveUserCallerId(state, request.user);
  if (request.requireDid && resolved.chosen === null) {
    return { refused: "no_caller_id_available" };
  }
  return resolved;
}

/** Byte-order comparison: locale-independent, so output never depends on the machine. */
export function compareAscii(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
