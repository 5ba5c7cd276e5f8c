// Caller ID resolution for outbound calls, SPEC.md §4.5 rules 2-5 (rule 1, a caller_id in an API
// request, is checked by the call operations and then passes through gatewayRangeCheck too).
import type { OrgState, User } from "./org-state.js";
import { gatewayRangeCheck, internationalDigits } from "./phone.js";
import { findDid, isUsableDid } from "./refs.js";

/** Where a resolved caller ID came from, for comments in generated files and for tests. */
export type CallerIdSource =
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

/** Byte-order comparison: locale-independent, so output never depends on the machine. */
export function compareAscii(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
