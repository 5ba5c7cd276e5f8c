// Checking a flow assertion (model/flow-file.ts) against an org: the simulator runs the call,
// once with someone answering and, when the flow says where an unanswered call goes next, once
// with nobody answering; the destinations entered must be the ones the flow expects.
import type { Flow } from "../model/flow-file.js";
import type { OrgState } from "../model/org-state.js";
import { findDid, isUsableDid } from "../model/refs.js";
import { nodeName, simulateCall } from "./simulate.js";

/** The org among `orgs` that owns the DID the flow calls. */
export function flowOrg(orgs: readonly OrgState[], flow: Flow): OrgState | undefined {
  return orgs.find((state) => {
    const did = findDid(state, flow.call);
    return did !== undefined && isUsableDid(did);
  });
}

type NodeKind = keyof typeof nodeName;

/** Per simulator node kind: whether a flow's destination of that kind names something the org has. */
const KNOWN_NODES: Record<NodeKind, (state: OrgState, destination: string) => boolean> = {
  ivr: (state, destination) => state.ivrs.some((ivr) => nodeName.ivr(ivr) === destination),
  queue: (state, destination) =>
    state.queues.some((queue) => nodeName.queue(queue) === destination),
  user: (state, destination) =>
    state.users.some((user) => nodeName.user(user.extension) === destination),
  time_condition: (state, destination) =>
    state.time_conditions.some((tc) => nodeName.time_condition(tc) === destination),
  // Phone numbers, mailboxes, callbacks and hangup name no org object.
  phone: () => true,
  voicemail: () => true,
  callback: () => true,
  hangup: () => true,
};

/** The destinations a flow may name in `state`, so a typo is an error rather than a failure. */
function knownDestination(state: OrgState, destination: string): boolean {
  const [kind = ""] = destination.split(" ", 1);
  return Object.hasOwn(KNOWN_NODES, kind)
    ? KNOWN_NODES[kind as NodeKind](state, destination)
    : true;
}

/** Fields of the flow that name something the org does not have: `[field, message]`. */
export function flowReferenceProblems(state: OrgState, flow: Flow): [string, string][] {
  const problems: [string, string][] = [];
  const lists = [["expect", flow.expect] as const, ["on_timeout", flow.on_timeout ?? []] as const];
  for (const [field, list] of lists) {
    list.forEach((destination, index) => {
      if (!knownDestination(state, destination)) {
        problems.push([`${field}[${index}]`, `${state.org.name} has no ${destination}`]);
      }
    });
  }
  return problems;
}

export interface FlowCheck {
  passed: boolean;
  /** One sentence per mismatch, saying what was expected and what the call does now. */
  failures: string[];
}

const arrow = (path: readonly string[]) => (path.length > 0 ? path.join(" -> ") : "(nowhere)");

/** Runs the flow's call(s) and compares the destinations entered with the flow's. */
export function checkFlow(state: OrgState, flow: Flow): FlowCheck {
  const failures: string[] = [];
  // IVR menus may be left out of `expect`: then they are left out of the comparison too.
  const namesIvrs = [...flow.expect, ...(flow.on_timeout ?? [])].some((d) => d.startsWith("ivr "));
  const seen = (path: string[]) => (namesIvrs ? path : path.filter((d) => !d.startsWith("ivr ")));
  const input = {
    did: flow.call,
    digits: flow.press,
    ...(flow.caller === undefined ? {} : { caller: flow.caller }),
  };
  const answered = simulateCall(state, input);
  const actual = seen(answered.path);
  if (arrow(actual) !== arrow(flow.expect)) {
    failures.push(
      `expected ${arrow(flow.expect)}, but the call goes ${arrow(actual)} (${answered.outcome})`,
    );
  }
  let final = answered;
  if (flow.on_timeout) {
    final = simulateCall(state, { ...input, noAnswer: true });
    const expected = [...flow.expect, ...flow.on_timeout];
    const unanswered = seen(final.path);
    if (arrow(unanswered) !== arrow(expected)) {
      failures.push(
        `when nobody answers, expected ${arrow(expected)}, but the call goes ${arrow(unanswered)} (${final.outcome})`,
      );
    }
  }
  if (flow.outcome !== undefined && !final.outcome.includes(flow.outcome)) {
    failures.push(`expected the outcome to say "${flow.outcome}", but it is: ${final.outcome}`);
  }
  return { passed: failures.length === 0, failures };
}
