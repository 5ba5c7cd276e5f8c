// Where a call goes next: the routing decisions of SPEC.md §4.4 (publish rules 1-5) and §2 (DID
// routing, queue timeout destinations), as data. The dialplan builder turns a Destination into
// steps; the simulator (simulate.ts) follows it. One copy of each rule, so the two cannot drift.
import { compareAscii } from "../model/caller-id.js";
import {
  type Destination,
  DID_ROUTE_KINDS,
  IVR_ACTION_KINDS,
  QUEUE_TIMEOUT_KINDS,
  resolveDestination,
  TIME_CONDITION_KINDS,
} from "../model/destinations.js";
import type {
  Did,
  Ivr,
  IvrOption,
  OrgState,
  OutboundRoute,
  Queue,
  TimeCondition,
  Trunk,
  User,
} from "../model/org-state.js";
import { findTrunk } from "../model/refs.js";
import type { ScheduleBranch } from "../model/time-conditions.js";
import { bestMatch } from "./dial-pattern.js";

/** The order in which menu options are written (and in which a reader expects them). */
export const DIGIT_ORDER = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "*", "#"];

export type { Destination } from "../model/destinations.js";

/** SPEC.md §4.4 rule 3: where a menu option of `ivr` leads. */
export function optionDestination(state: OrgState, ivr: Ivr, option: IvrOption): Destination {
  if (!Object.hasOwn(IVR_ACTION_KINDS, option.action_type)) {
    const message = `Invalid action_type: ${option.action_type}`;
    return { kind: "invalid", field: "action_type", message };
  }
  const kind = IVR_ACTION_KINDS[option.action_type as keyof typeof IVR_ACTION_KINDS];
  return resolveDestination(state, kind, option.action_destination ?? "", ivr);
}

/** SPEC.md §2 and §4.4 rule 5: where an inbound call to `did` goes. */
export function didDestination(state: OrgState, did: Did): Destination {
  if (did.routing_type === null) return { kind: "not_in_service" };
  return resolveDestination(
    state,
    DID_ROUTE_KINDS[did.routing_type],
    did.routing_destination ?? "",
    undefined,
    (ref) => `routing destination ${ref} does not exist`,
  );
}

/** SPEC.md §2: where a queue sends callers it could not serve (the timeout destination pair). */
export function queueTimeoutDestination(state: OrgState, queue: Queue): Destination {
  return resolveDestination(
    state,
    QUEUE_TIMEOUT_KINDS[queue.timeout_destination_type],
    queue.timeout_destination ?? "",
    queue,
    (ref) => `timeout destination ${ref} does not exist`,
  );
}

/**
 * Where a time condition sends the call on `branch`: its open or closed destination, or the
 * exception's own (a closed exception, one with no destination, takes the closed one).
 */
export function timeConditionDestination(
  state: OrgState,
  tc: TimeCondition,
  branch: ScheduleBranch,
): Destination {
  const [type, ref] =
    branch.branch === "exception" && branch.exception.destination_type !== null
      ? [branch.exception.destination_type, branch.exception.destination]
      : branch.branch === "open"
        ? [tc.open_destination_type, tc.open_destination]
        : [tc.closed_destination_type, tc.closed_destination];
  return resolveDestination(
    state,
    TIME_CONDITION_KINDS[type],
    ref ?? "",
    undefined,
    (missing) => `${branch.branch} destination ${missing} does not exist`,
  );
}

/** Every destination a time condition may send a call to: open, closed, then each exception's. */
export function timeConditionBranches(state: OrgState, tc: TimeCondition): Destination[] {
  return [
    timeConditionDestination(state, tc, { branch: "open" }),
    timeConditionDestination(state, tc, { branch: "closed" }),
    ...tc.exceptions.map((exception, index) =>
      timeConditionDestination(state, tc, { branch: "exception", index, exception }),
    ),
  ];
}

/** SPEC.md §4.4 publish rule 1: only active IVRs are written to the dialplan. */
export function isPublished(ivr: Ivr): boolean {
  return ivr.status === "active";
}

/** Users the dialplan can ring: inactive users are left out of every context. */
export function isReachableUser(user: User | undefined): user is User {
  return user?.status === "active";
}

/** A menu's options in the order they are written (1-9, 0, *, #), with their index in the IVR. */
export function menuOptions(ivr: Ivr): { option: IvrOption; optionIndex: number }[] {
  return ivr.options
    .map((option, optionIndex) => ({ option, optionIndex }))
    .sort((a, b) => DIGIT_ORDER.indexOf(a.option.digit) - DIGIT_ORDER.indexOf(b.option.digit));
}

/** Users a caller may reach by dialling their extension in a menu with direct dial on. */
export function directDialUsers(ivr: Ivr, activeUsers: readonly User[]): User[] {
  // Only the org's real 4-digit extensions, never a pattern: a pattern would let a caller
  // reach the outbound routes through the internal context.
  return ivr.direct_extension_dial ? activeUsers.filter((u) => /^[0-9]{4}$/.test(u.extension)) : [];
}

/**
 * SPEC.md §4.4 rule 2: whether the menu plays again after `attempt` failed attempts (timeout or
 * invalid digit). The dialplan increments IVR_RETRIES and loops while it is below max_retries.
 */
export function menuRepeats(ivr: Ivr, attempt: number): boolean {
  return attempt < ivr.max_retries;
}

/** The engine's wait when WaitExten gets 0: the channel's response timeout (ASTERISK.md). */
export const ENGINE_DEFAULT_WAIT = 10;

/** How long the menu really waits for a digit: a timeout of 0 falls back to the engine default. */
export function effectiveMenuWait(ivr: Ivr): number {
  return ivr.timeout > 0 ? ivr.timeout : ENGINE_DEFAULT_WAIT;
}

/** One pattern of the org's outbound context and the route it dials. */
export interface OutboundEntry {
  pattern: string;
  route: OutboundRoute;
  trunk: Trunk;
}

/**
 * The outbound context's route entries, routes by name, patterns in their order, and the
 * problems that keep a pattern out (a missing trunk, a leading +, a pattern used twice).
 */
export function outboundEntries(state: OrgState): {
  routes: OutboundEntry[];
  problems: { path: string; message: string }[];
} {
  const routes: OutboundEntry[] = [];
  const problems: { path: string; message: string }[] = [];
  const seen = new Map<string, string>();
  const sorted = state.outbound_routes
    .map((route, index) => ({ route, index }))
    .sort((a, b) => compareAscii(a.route.name, b.route.name));
  for (const { route, index } of sorted) {
    const trunk = findTrunk(state, route.trunk);
    if (!trunk) {
      problems.push({
        path: `outbound_routes[${index}].trunk`,
        message: `no trunk named ${route.trunk}`,
      });
      continue;
    }
    route.patterns.forEach((pattern, patternIndex) => {
      const path = `outbound_routes[${index}].patterns[${patternIndex}]`;
      if (pattern.startsWith("+") || pattern.startsWith("_+")) {
        problems.push({
          path,
          message: "a pattern cannot start with +: numbers with + are routed again without it",
        });
        return;
      }
      const other = seen.get(pattern);
      if (other !== undefined) {
        problems.push({ path, message: `pattern ${pattern} is already used by route '${other}'` });
        return;
      }
      seen.set(pattern, route.name);
      routes.push({ pattern, route, trunk });
    });
  }
  return { routes, problems };
}

/**
 * The route entry the outbound context sends `number` to, as the engine picks it: a leading `+`
 * is dropped first (`_+X.` routes the rest again), then the most specific pattern wins.
 * Undefined when no route takes the number (the call would find no extension).
 */
export function outboundEntryFor(state: OrgState, number: string): OutboundEntry | undefined {
  const digits = number.startsWith("+") ? number.slice(1) : number;
  return bestMatch(outboundEntries(state).routes, digits, (entry) => entry.pattern);
}

/**
 * Whether the internal context has an extension for `exten`: an active user, then the included
 * IVR, queue and outbound contexts in that order (SPEC.md §4.4 rule 4).
 */
export function internalContextHas(state: OrgState, exten: string): boolean {
  return (
    isReachableUser(state.users.find((u) => u.extension === exten)) ||
    state.ivrs.some((ivr) => isPublished(ivr) && ivr.extension === exten) ||
    state.queues.some((queue) => queue.number === exten) ||
    outboundEntryFor(state, exten) !== undefined
  );
}
