// Static lint of an org: configurations that compile and load but probably do not do what the
// operator meant. Each finding is a warning (`pbxctl lint`, and `validate` output); `--strict`
// makes them errors. Built on the compiler's own rule functions, like the simulator.

import type { Destination } from "../model/destinations.js";
import type { Diagnostic } from "../model/diagnostic.js";
import { type Ivr, type OrgState, type Queue, WEEKDAYS } from "../model/org-state.js";
import { findIvr, isUsableDid } from "../model/refs.js";
import {
  dayNumber,
  exceptionDays,
  lastDate,
  MINUTES_PER_DAY,
  openMinutes,
  rangeText,
  rangeWindows,
  weekdayOfDay,
} from "../model/time-conditions.js";
import { compareExtensions, patternsOverlap } from "./dial-pattern.js";
import {
  didDestination,
  ENGINE_DEFAULT_WAIT,
  isPublished,
  isReachableUser,
  optionDestination,
  outboundEntries,
  queueTimeoutDestination,
  timeConditionBranches,
} from "./routing.js";

/** The lint rules, by the id each finding's message starts with. */
export const LINT_RULES = {
  "unreachable-ivr": "an active IVR that no DID and no menu option leads to",
  "did-without-route": "an assigned, active DID with no routing: callers hear not-in-service",
  "queue-without-members": "a queue with no member who can be rung",
  "option-to-inactive-ivr": "a menu option or DID that leads to an inactive IVR",
  "timeout-zero": "an IVR timeout of 0, which the engine treats as its 10 s default",
  "overlapping-patterns": "outbound patterns of different routes that match the same numbers",
  "queue-timeout-loop": "queue timeout destinations that lead back to a queue already passed",
  "time-condition-never-open": "a time condition with no open hours: every call is closed",
  "overlapping-time-ranges": "two weekly ranges of one time condition that share open minutes",
  "exception-outside-ranges": "a closed exception on days the weekly ranges keep closed anyway",
} as const;

export type LintRule = keyof typeof LINT_RULES;

const finding = (rule: LintRule, path: string, message: string): Diagnostic => ({
  severity: "warning",
  path,
  message: `[${rule}] ${message}`,
});

/** Every lint finding of the org, in a stable order (rule by rule, then as the file lists). */
export function lintOrg(state: OrgState): Diagnostic[] {
  return [
    ...unreachableIvrs(state),
    ...didsWithoutRoute(state),
    ...queuesWithoutMembers(state),
    ...toInactiveIvrs(state),
    ...zeroTimeouts(state),
    ...overlappingPatterns(state),
    ...queueTimeoutLoops(state),
    ...neverOpen(state),
    ...overlappingRanges(state),
    ...exceptionsOutsideRanges(state),
  ];
}

/** The IVRs a destination enters: itself, or through a time condition, any of its branches. */
function ivrsEntered(state: OrgState, d: Destination): Ivr[] {
  if (d.kind === "ivr") return isPublished(d.ivr) ? [d.ivr] : [];
  if (d.kind !== "time_condition") return [];
  return timeConditionBranches(state, d.timeCondition).flatMap((b) =>
    b.kind === "ivr" && isPublished(b.ivr) ? [b.ivr] : [],
  );
}

function neverOpen(state: OrgState): Diagnostic[] {
  return state.time_conditions.flatMap((tc, index) =>
    tc.ranges.length === 0
      ? [
          finding(
            "time-condition-never-open",
            `time_conditions[${index}].ranges`,
            `time condition ${tc.name} has no weekly range, so it is never open: every call goes to its closed destination`,
          ),
        ]
      : [],
  );
}

function overlappingRanges(state: OrgState): Diagnostic[] {
  const found: Diagnostic[] = [];
  state.time_conditions.forEach((tc, index) => {
    tc.ranges.forEach((range, k) => {
      const mine = openMinutes({ ranges: [range] });
      for (let j = 0; j < k; j++) {
        const other = tc.ranges[j]!;
        const shared = rangeWindows(other).some((w) => {
          for (let m = w.start; m < w.end; m++) if (mine[m % mine.length]) return true;
          return false;
        });
        if (!shared) continue;
        found.push(
          finding(
            "overlapping-time-ranges",
            `time_conditions[${index}].ranges[${k}]`,
            `range ${rangeText(range)} of time condition ${tc.name} overlaps ranges[${j}] (${rangeText(other)}); the open hours are their union`,
          ),
        );
        break;
      }
    });
  });
  return found;
}

/** Whether any day of a closed exception has open hours it would close. */
function closesOpenHours(open: boolean[], first: number, last: number): boolean {
  for (let day = first; day <= Math.min(last, first + 6); day++) {
    const base = WEEKDAYS.indexOf(weekdayOfDay(day)) * MINUTES_PER_DAY;
    if (open.slice(base, base + MINUTES_PER_DAY).some(Boolean)) return true;
  }
  return false;
}

function exceptionsOutsideRanges(state: OrgState): Diagnostic[] {
  const found: Diagnostic[] = [];
  state.time_conditions.forEach((tc, index) => {
    if (tc.ranges.length === 0) return; // reported as never open
    const open = openMinutes(tc);
    tc.exceptions.forEach((exception, k) => {
      if (exception.destination_type !== null) return; // has somewhere of its own to go
      const first = dayNumber(exception.start_date);
      const last = dayNumber(lastDate(exception));
      if (closesOpenHours(open, first, last)) return;
      found.push(
        finding(
          "exception-outside-ranges",
          `time_conditions[${index}].exceptions[${k}]`,
          `exception ${exceptionDays(exception)} of time condition ${tc.name} closes only days that are closed anyway: it changes nothing`,
        ),
      );
    });
  });
  return found;
}

function unreachableIvrs(state: OrgState): Diagnostic[] {
  const reached = new Set<unknown>();
  const pending = state.dids
    .filter(isUsableDid)
    .map((did) => didDestination(state, did))
    .flatMap((d) => ivrsEntered(state, d));
  while (pending.length > 0) {
    const ivr = pending.pop()!;
    if (reached.has(ivr)) continue;
    reached.add(ivr);
    for (const option of ivr.options) {
      pending.push(...ivrsEntered(state, optionDestination(state, ivr, option)));
    }
  }
  return state.ivrs.flatMap((ivr, index) =>
    isPublished(ivr) && !reached.has(ivr)
      ? [
          finding(
            "unreachable-ivr",
            `ivrs[${index}]`,
            `IVR ${ivr.name} (${ivr.extension}) is reached by no DID and no menu option; only a phone dialling ${ivr.extension} gets there`,
          ),
        ]
      : [],
  );
}

function didsWithoutRoute(state: OrgState): Diagnostic[] {
  return state.dids.flatMap((did, index) =>
    isUsableDid(did) && did.routing_type === null
      ? [
          finding(
            "did-without-route",
            `dids[${index}]`,
            `DID ${did.number} has no route: callers hear number-not-in-service`,
          ),
        ]
      : [],
  );
}

function queuesWithoutMembers(state: OrgState): Diagnostic[] {
  return state.queues.flatMap((queue, index) => {
    const ringable = queue.members.filter((m) =>
      isReachableUser(state.users.find((u) => u.extension === m.extension)),
    );
    if (ringable.length > 0) return [];
    const why = queue.members.length > 0 ? "every member is an inactive user" : "it has no members";
    const then =
      queue.max_wait > 0
        ? `callers wait ${queue.max_wait} s for nobody`
        : "callers wait forever (max_wait 0)";
    return [
      finding(
        "queue-without-members",
        `queues[${index}].members`,
        `queue ${queue.name} (${queue.number}) rings nobody (${why}): ${then}`,
      ),
    ];
  });
}

function toInactiveIvrs(state: OrgState): Diagnostic[] {
  const found: Diagnostic[] = [];
  state.ivrs.forEach((ivr, index) => {
    ivr.options.forEach((option, optionIndex) => {
      const d = optionDestination(state, ivr, option);
      if (d.kind === "ivr" && !isPublished(d.ivr)) {
        found.push(
          finding(
            "option-to-inactive-ivr",
            `ivrs[${index}].options[${optionIndex}].action_destination`,
            `option ${option.digit} of IVR ${ivr.name} leads to IVR ${d.ivr.name} (${d.ivr.extension}), which is inactive and absent from the dialplan: the call ends`,
          ),
        );
      }
    });
  });
  state.dids.forEach((did, index) => {
    if (!isUsableDid(did) || did.routing_type !== "ivr") return;
    const ivr = findIvr(state, did.routing_destination ?? "");
    if (ivr && !isPublished(ivr)) {
      found.push(
        finding(
          "option-to-inactive-ivr",
          `dids[${index}].routing_destination`,
          `DID ${did.number} leads to IVR ${ivr.name} (${ivr.extension}), which is inactive and absent from the dialplan: the call ends`,
        ),
      );
    }
  });
  return found;
}

function zeroTimeouts(state: OrgState): Diagnostic[] {
  return state.ivrs.flatMap((ivr, index) =>
    ivr.timeout === 0 && isPublished(ivr)
      ? [
          finding(
            "timeout-zero",
            `ivrs[${index}].timeout`,
            `IVR ${ivr.name} (${ivr.extension}) has timeout 0: WaitExten(0) waits the engine's default of ${ENGINE_DEFAULT_WAIT} s, not 0`,
          ),
        ]
      : [],
  );
}

function overlappingPatterns(state: OrgState): Diagnostic[] {
  const { routes } = outboundEntries(state);
  const found: Diagnostic[] = [];
  const pathOf = (entry: (typeof routes)[number]) => {
    const index = state.outbound_routes.indexOf(entry.route);
    return `outbound_routes[${index}].patterns[${entry.route.patterns.indexOf(entry.pattern)}]`;
  };
  routes.forEach((a, i) => {
    for (const b of routes.slice(i + 1)) {
      if (a.route === b.route || !patternsOverlap(a.pattern, b.pattern)) continue;
      const [wins, loses] = compareExtensions(a.pattern, b.pattern) <= 0 ? [a, b] : [b, a];
      found.push(
        finding(
          "overlapping-patterns",
          pathOf(loses),
          `pattern ${loses.pattern} (route ${loses.route.name}) and ${wins.pattern} (route ${wins.route.name}) match some of the same numbers; Asterisk sends those to ${wins.pattern}, the more specific, without a word`,
        ),
      );
    }
  });
  return found;
}

function queueTimeoutLoops(state: OrgState): Diagnostic[] {
  const found: Diagnostic[] = [];
  const reported = new Set<Queue>();
  state.queues.forEach((start, index) => {
    const chain: Queue[] = [start];
    for (;;) {
      const next = queueTimeoutDestination(state, chain[chain.length - 1]!);
      if (next.kind !== "queue") return;
      if (next.queue === start) break;
      if (chain.includes(next.queue)) return; // a loop that does not pass `start`: its own queues report it
      chain.push(next.queue);
    }
    if (chain.some((q) => reported.has(q))) return;
    for (const q of chain) reported.add(q);
    const names = [...chain, start].map((q) => `${q.name} (${q.number})`).join(" -> ");
    found.push(
      finding(
        "queue-timeout-loop",
        `queues[${index}].timeout_destination`,
        `queue timeouts loop: ${names}; a caller nobody answers goes round until they hang up`,
      ),
    );
  });
  return found;
}
