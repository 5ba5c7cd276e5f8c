// Lookups by the references a hand-written YAML file may use: queues and IVRs by id or by their
// number/extension, users by extension, trunks and time conditions by name or id, DIDs by any form of the number.
import type { Did, Ivr, OrgState, Queue, TimeCondition, Trunk, User } from "./org-state.js";
import { sameNumber } from "./phone.js";

/** Ids are UUIDs, which ignore letter case (an API client may send a reference in upper case). */
function sameId(id: string | undefined, ref: string): boolean {
  if (id === undefined) return false;
  return id === ref || (id.length === ref.length && id.toLowerCase() === ref.toLowerCase());
}

/** The queue whose id or number is `ref`. */
export function findQueue(state: OrgState, ref: string): Queue | undefined {
  return state.queues.find((q) => sameId(q.id, ref) || q.number === ref);
}

/** The IVR whose id or extension is `ref`. */
export function findIvr(state: OrgState, ref: string): Ivr | undefined {
  return state.ivrs.find((i) => sameId(i.id, ref) || i.extension === ref);
}

/** The user with this extension (or id). */
export function findUser(state: OrgState, ref: string): User | undefined {
  return state.users.find((u) => u.extension === ref || sameId(u.id, ref));
}

/** The trunk with this name (or id). */
export function findTrunk(state: OrgState, ref: string): Trunk | undefined {
  return state.trunks.find((t) => t.name === ref || sameId(t.id, ref));
}

/** The time condition with this name (or id). */
export function findTimeCondition(state: OrgState, ref: string): TimeCondition | undefined {
  return state.time_conditions.find((t) => t.name === ref || sameId(t.id, ref));
}

/** The org's DID with this number, in whatever form it is written. */
export function findDid(state: OrgState, number: string): Did | undefined {
  return state.dids.find((d) => sameNumber(d.number, number));
}

/** A DID that may be used as caller ID: assigned to the org and active. */
export function isUsableDid(did: Did): boolean {
  return did.pool_status === "assigned" && did.status === "active";
}

/**
 * True for a DID the shared gateway dispatches: usable and the platform's (`source: pool`). An
 * org's own number reaches it over its own trunks only (issue 28 item 9).
 */
export function isGatewayDid(did: Did): boolean {
  return isUsableDid(did) && (did.source ?? "pool") === "pool";
}
