// The call-flow simulator: what happens when someone calls a DID of the org and presses digits,
// step by step, each step named by the generated context and extension the engine runs. Pure,
// like the rest of the compiler, and built on the same rule functions (routing.ts, caller-id.ts,
// dial-pattern.ts), so it answers for the dialplan the compiler writes, not for a second reading
// of the specification.

import { resolveUserCallerId } from "../model/caller-id.js";
import { assertNever } from "../model/destinations.js";
import type { Ivr, OrgState, Queue, TimeCondition, User } from "../model/org-state.js";
import {
  didAliases,
  digitsOnly,
  gatewayRangeCheck,
  SENTINEL_DID,
  sameNumber,
} from "../model/phone.js";
import { isUsableDid } from "../model/refs.js";

export { instantFromText } from "../model/time-conditions.js";

import {
  branchAt,
  exceptionDays,
  localTime,
  rangeText,
  type ScheduleBranch,
} from "../model/time-conditions.js";
import { callerIdComment } from "./dialplan.js";
import { type OrgNames, orgNames } from "./names.js";
import {
  type Destination,
  didDestination,
  directDialUsers,
  ENGINE_DEFAULT_WAIT,
  effectiveMenuWait,
  isPublished,
  isReachableUser,
  menuOptions,
  menuRepeats,
  optionDestination,
  outboundEntryFor,
  queueTimeoutDestination,
  timeConditionDestination,
} from "./routing.js";

/**
 * The digits of each prompt from their text form, `1,3` (what `pbxctl simulate --digits` and
 * `POST /simulate` take): comma-separated, an empty entry waits the prompt out; "" is none.
 */
export function digitsFromText(text: string): string[] {
  return text === "" ? [] : text.split(",");
}

export interface SimulationInput {
  /** The number called, in any form a carrier delivers (local, international, E.164). */
  did: string;
  /** What the caller presses at each menu prompt, in order; "" lets that prompt time out. */
  digits?: readonly string[];
  /** The caller's number (what a callback option stores). */
  caller?: string;
  /** Nobody answers: queues run out their max_wait, users their ring time. */
  noAnswer?: boolean;
  /**
   * When the call is made, as milliseconds since the epoch: time conditions take the branch
   * their zone's wall clock gives then. Without it, a time condition is taken as open.
   */
  at?: number;
}

/** What a step does; `node` steps enter a destination a flow assertion can name. */
export type StepKind =
  | "did"
  | "ivr"
  | "menu"
  | "option"
  | "timeout"
  | "invalid"
  | "queue"
  | "user"
  | "ring"
  | "outbound"
  | "caller_id"
  | "voicemail"
  | "callback"
  | "hangup"
  | "time_condition"
  /** The extension is not where the call looked: the engine tries the next included context. */
  | "fallthrough"
  | "end";

export interface SimulationStep {
  /** The generated dialplan context the step runs in. */
  context: string;
  /** The extension in that context. */
  exten: string;
  kind: StepKind;
  /** The destination entered, as flows name it: `ivr Main`, `queue Sales`, `user 1002`, ... */
  node?: string;
  /** A subroutine (Gosub) of the step before: ringing, the caller-ID lookup. */
  subroutine?: boolean;
  /** One plain sentence. */
  text: string;
}

export interface Simulation {
  org: string;
  did: string;
  steps: SimulationStep[];
  /** How the call ends, one sentence. */
  outcome: string;
  /** The destinations entered in order (`node` of the steps): what a flow assertion checks. */
  path: string[];
  /** When the call leaves through a trunk: what the carrier is sent. */
  dial_out?: DialOut;
}

/** A call leaving through a trunk, as the carrier sees it. */
export interface DialOut {
  /** The number sent to the trunk (after strip and prepend). */
  number: string;
  trunk: string;
  /** The caller ID on the wire (route override, or SPEC.md §4.5 rules 2-5, range-checked). */
  caller_id: string;
}

/** The destination names a flow file uses for each kind of destination. */
export const nodeName = {
  ivr: (ivr: Ivr) => `ivr ${ivr.name}`,
  queue: (queue: Queue) => `queue ${queue.name}`,
  user: (extension: string) => `user ${extension}`,
  phone: (number: string) => `phone ${number}`,
  voicemail: (mailbox: string) => `voicemail ${mailbox}`,
  callback: (number: string) => `callback ${number}`,
  hangup: "hangup",
  time_condition: (tc: TimeCondition) => `time_condition ${tc.name}`,
} as const;

interface Walk {
  state: OrgState;
  names: OrgNames;
  steps: SimulationStep[];
  digits: string[];
  caller: string;
  answer: boolean;
  queuesVisited: Set<Queue>;
  at: number | undefined;
  outcome: string;
  dialOut?: DialOut;
}

function add(walk: Walk, step: SimulationStep): void {
  walk.steps.push(step);
}

/** Ends the walk with `outcome`; every walking function returns it, so each path ends once. */
function end(walk: Walk, outcome: string): Outcome {
  walk.outcome = outcome;
  return outcome;
}

/** How the call ends, one sentence (what the walking functions return). */
type Outcome = string;

const seconds = (n: number) => `${n} s`;

/** Follows one call through the org's dialplan. */
export function simulateCall(state: OrgState, input: SimulationInput): Simulation {
  const names = orgNames(state.org.context_prefix);
  const walk: Walk = {
    state,
    names,
    steps: [],
    digits: [...(input.digits ?? [])],
    caller: input.caller ?? "the caller's number",
    answer: !input.noAnswer,
    queuesVisited: new Set(),
    at: input.at,
    outcome: "",
  };
  enterDid(walk, input.did);
  return {
    org: state.org.name,
    did: input.did,
    steps: walk.steps,
    outcome: walk.outcome,
    path: walk.steps.flatMap((s) => (s.node ? [s.node] : [])),
    ...(walk.dialOut ? { dial_out: walk.dialOut } : {}),
  };
}

function enterDid(walk: Walk, dialled: string): Outcome {
  const { state, names } = walk;
  const did = state.dids.filter(isUsableDid).find((d) => sameNumber(d.number, dialled));
  if (!did) {
    add(walk, {
      context: names.incoming,
      exten: dialled,
      kind: "end",
      text: `${dialled} is not an assigned, active DID of ${state.org.name}: the org's incoming context has no such extension`,
    });
    return end(walk, `${dialled} does not reach ${state.org.name}`);
  }
  const aliases = didAliases(did.number);
  const canonical = aliases[aliases.length - 1]!;
  // The carrier delivers one form; every non-canonical alias jumps to the canonical entry.
  const arrived =
    aliases.find((a) => a === dialled) ??
    aliases.find((a) => a === digitsOnly(dialled)) ??
    canonical;
  if (arrived !== canonical) {
    add(walk, {
      context: names.incoming,
      exten: arrived,
      kind: "did",
      text: `${arrived} arrives, another form of ${canonical}: goes there`,
    });
  }
  const limit = state.org.settings.max_concurrent_calls;
  add(walk, {
    context: names.incoming,
    exten: canonical,
    kind: "did",
    text: `DID ${did.number} of ${state.org.name}: marks the call as the org's${limit > 0 ? `, checks the limit of ${limit} concurrent calls` : ""}${environmentNote(did.routing_environment)}`,
  });
  return follow(walk, didDestination(state, did), { context: names.incoming, exten: canonical });
}

/** Where the step that sends the call on is, for destinations that run in place. */
interface Here {
  context: string;
  exten: string;
}

function follow(walk: Walk, destination: Destination, here: Here, callerExt?: string): Outcome {
  const { names } = walk;
  switch (destination.kind) {
    case "user":
      return enterInternal(walk, destination.user.extension);
    case "queue":
      return enterQueue(walk, destination.queue);
    case "ivr":
      return enterIvr(walk, destination.ivr.extension);
    case "phone":
      return enterOutbound(walk, destination.number, callerExt);
    case "voicemail":
      add(walk, {
        ...here,
        kind: "voicemail",
        node: nodeName.voicemail(destination.mailbox),
        text: `voicemail: the caller leaves a message in mailbox ${destination.mailbox}@${names.voicemail}`,
      });
      return end(walk, `message left in mailbox ${destination.mailbox}`);
    case "callback":
      add(walk, {
        ...here,
        kind: "callback",
        node: nodeName.callback(destination.number),
        text: `callback: stores ${walk.caller} for a call back, plays a thank-you and hangs up`,
      });
      return end(walk, `callback requested (${walk.caller})`);
    case "hangup":
      add(walk, {
        ...here,
        kind: "hangup",
        node: nodeName.hangup,
        text: "plays goodbye and hangs up",
      });
      return end(walk, "goodbye, hung up");
    case "time_condition":
      return enterTimeCondition(walk, destination.timeCondition);
    case "end":
      add(walk, { ...here, kind: "end", text: "hangs up" });
      return end(walk, "hung up");
    case "not_in_service":
      add(walk, {
        ...here,
        kind: "end",
        text: "the DID has no routing: plays number-not-in-service and hangs up",
      });
      return end(walk, "number not in service");
    case "invalid":
      add(walk, { ...here, kind: "end", text: `${destination.message}: hangs up` });
      return end(walk, `hung up (${destination.message})`);
    default:
      return assertNever(destination);
  }
}

/** A Goto into a time condition's context: which branch the wall clock in its zone gives. */
function enterTimeCondition(walk: Walk, tc: TimeCondition): Outcome {
  const context = walk.names.timeCondition(tc.name);
  const hours = tc.ranges.length > 0 ? tc.ranges.map(rangeText).join("; ") : "no weekly range";
  let branch: ScheduleBranch = { branch: "open" };
  let when = "no time given (--at): taken as open";
  if (walk.at !== undefined) {
    const local = localTime(walk.at, tc.time_zone);
    branch = branchAt(tc, local);
    const reading = `${local.weekday} ${local.date} ${local.time} in ${tc.time_zone}`;
    when =
      branch.branch === "exception"
        ? `${reading} is exception ${exceptionDays(branch.exception)}${branch.exception.destination_type === null ? ": closed" : ""}`
        : `${reading} is ${branch.branch === "open" ? "within" : "outside"} the open hours: ${branch.branch}`;
  }
  add(walk, {
    context,
    exten: "s",
    kind: "time_condition",
    node: nodeName.time_condition(tc),
    text: `time condition ${tc.name} (${hours}): ${when}`,
  });
  const exten =
    branch.branch === "exception" && branch.exception.destination_type !== null
      ? `x${branch.index}`
      : branch.branch === "open"
        ? "open"
        : "closed";
  return follow(walk, timeConditionDestination(walk.state, tc, branch), { context, exten });
}

/**
 * A Goto into the internal context: the org's users first, then the included IVR, queue and
 * outbound contexts in that order (SPEC.md §4.4 rule 4), as the engine looks an extension up.
 */
function enterInternal(walk: Walk, exten: string, callerExt?: string): Outcome {
  const { state, names } = walk;
  const user = state.users.find((u) => u.extension === exten);
  if (isReachableUser(user)) return ringUser(walk, user);
  const ivr = state.ivrs.find((i) => isPublished(i) && i.extension === exten);
  if (ivr) return enterIvr(walk, exten);
  const queue = state.queues.find((q) => q.number === exten);
  if (queue) return enterQueue(walk, queue);
  if (user) {
    add(walk, {
      context: names.internal,
      exten,
      kind: "fallthrough",
      text: `user ${exten} is inactive, so absent from the internal context; looking further in the outbound routes`,
    });
  }
  if (hasOutboundRoute(walk, exten)) return enterOutbound(walk, exten, callerExt);
  add(walk, {
    context: names.internal,
    exten,
    kind: "end",
    text: `no extension ${exten} in the internal context or its includes: the call ends`,
  });
  return end(walk, `dead end at extension ${exten}`);
}

function ringUser(walk: Walk, user: User): Outcome {
  const { state, names } = walk;
  const recorded = state.org.settings.recording_enabled && user.call_recording;
  add(walk, {
    context: names.internal,
    exten: user.extension,
    kind: "user",
    node: nodeName.user(user.extension),
    text: `user ${user.extension} (${user.name}): rings for ${seconds(user.ring_time)}${recorded ? ", recorded" : ""}`,
  });
  if (user.ring_target === "phone" && user.phone_number) {
    add(walk, {
      context: names.dial,
      exten: user.extension,
      kind: "ring",
      subroutine: true,
      text: `rings the mobile ${user.phone_number} through the outbound routes, as if ${user.name} called out`,
    });
    return enterOutbound(walk, user.phone_number, user.extension, true);
  }
  add(walk, {
    context: names.dial,
    exten: user.extension,
    kind: "ring",
    subroutine: true,
    text: `rings the softphone PJSIP/${names.endpoint(user.extension)}`,
  });
  return end(
    walk,
    walk.answer
      ? `answered by ${user.name} (${user.extension})`
      : `${user.name} (${user.extension}) does not answer within ${seconds(user.ring_time)}: hung up`,
  );
}

function enterQueue(walk: Walk, queue: Queue): Outcome {
  const { state, names } = walk;
  if (walk.queuesVisited.has(queue)) {
    add(walk, {
      context: names.queue,
      exten: queue.number,
      kind: "queue",
      node: nodeName.queue(queue),
      text: `back to queue ${queue.name} (${queue.number}): the timeout destinations loop`,
    });
    return end(walk, `loops between queues, back to ${queue.name}, until someone answers`);
  }
  walk.queuesVisited.add(queue);
  const members = queue.members
    .map((m) => ({ member: m, user: state.users.find((u) => u.extension === m.extension) }))
    .filter(({ user }) => isReachableUser(user));
  const ringing =
    members.length === 0
      ? "no member to ring"
      : `rings ${members.map(({ member, user }) => `${user!.name} (${member.extension}, ${seconds(member.ring_time)})`).join(", ")}`;
  const wait = queue.max_wait > 0 ? `waits at most ${seconds(queue.max_wait)}` : "waits forever";
  add(walk, {
    context: names.queue,
    exten: queue.number,
    kind: "queue",
    node: nodeName.queue(queue),
    text: `queue ${queue.name} (${queue.number}), ${queue.strategy}: ${ringing}; ${wait}`,
  });
  if (walk.answer && members.length > 0) {
    return end(walk, `answered by a member of queue ${queue.name}`);
  }
  if (queue.max_wait === 0) {
    return end(walk, `waits in queue ${queue.name} until the caller hangs up (max_wait 0)`);
  }
  const reason = members.length === 0 ? "nobody to ring" : "no member answers";
  const next = queueTimeoutDestination(state, queue);
  add(walk, {
    context: names.queue,
    exten: queue.number,
    kind: "timeout",
    text: `${reason}: after ${seconds(queue.max_wait)} the queue gives up; timeout destination ${queue.timeout_destination_type}${queue.timeout_destination ? ` ${queue.timeout_destination}` : ""}`,
  });
  return follow(walk, next, { context: names.queue, exten: queue.number });
}

/** A Goto into the IVR context, which holds only the published (active) IVRs. */
function enterIvr(walk: Walk, exten: string): Outcome {
  const { state, names } = walk;
  const ivr = state.ivrs.find((i) => i.extension === exten);
  if (!ivr || !isPublished(ivr)) {
    add(walk, {
      context: names.ivr,
      exten,
      kind: "end",
      ...(ivr ? { node: nodeName.ivr(ivr) } : {}),
      text: `${ivr ? `IVR ${ivr.name} (${exten}) is inactive` : `no IVR ${exten}`}, so absent from the dialplan: the call ends`,
    });
    return end(walk, `dead end: IVR ${exten} is not published`);
  }
  add(walk, {
    context: names.ivr,
    exten,
    kind: "ivr",
    node: nodeName.ivr(ivr),
    text: `IVR ${ivr.name} (${exten}): IVR_RETRIES=0`,
  });
  return runMenu(walk, ivr);
}

function runMenu(walk: Walk, ivr: Ivr): Outcome {
  const { state, names } = walk;
  const menu = names.ivrMenu(ivr.extension);
  const wait = effectiveMenuWait(ivr);
  const waitText =
    ivr.timeout > 0
      ? seconds(wait)
      : `${seconds(ENGINE_DEFAULT_WAIT)} (timeout 0: the engine's default)`;
  const activeUsers = state.users.filter(isReachableUser);
  for (let attempt = 0; ; ) {
    add(walk, {
      context: menu,
      exten: "s",
      kind: "menu",
      text: `answers, plays ${ivr.greeting_prompt ? `greetings/${ivr.greeting_prompt}` : "no greeting (none generated yet)"}, waits ${waitText} for a digit`,
    });
    const pressed = walk.digits.shift() ?? "";
    let failure: Here & { kind: "timeout" | "invalid"; text: string };
    if (pressed === "") {
      failure = {
        context: menu,
        exten: "t",
        kind: "timeout",
        text: `no digit within ${seconds(wait)}`,
      };
    } else {
      const option = menuOptions(ivr).find(({ option }) => option.digit === pressed)?.option;
      const destination = option ? optionDestination(state, ivr, option) : undefined;
      if (option && destination && destination.kind !== "invalid") {
        const label = option.description ? ` (${option.description})` : "";
        add(walk, {
          context: menu,
          exten: pressed,
          kind: "option",
          text: `pressed ${pressed}: option ${option.action_type}${label}`,
        });
        return follow(walk, destination, { context: menu, exten: pressed });
      }
      const direct = directDialUsers(ivr, activeUsers).find((u) => u.extension === pressed);
      if (direct) {
        add(walk, {
          context: menu,
          exten: pressed,
          kind: "option",
          text: `dialled ${pressed}: direct extension dial`,
        });
        return enterInternal(walk, direct.extension);
      }
      failure = {
        context: menu,
        exten: "i",
        kind: "invalid",
        text: `pressed ${pressed}: not an option of this menu; plays pbx-invalid`,
      };
    }
    attempt += 1;
    const again = menuRepeats(ivr, attempt);
    add(walk, {
      context: failure.context,
      exten: failure.exten,
      kind: failure.kind,
      text: `${failure.text}; IVR_RETRIES=${attempt}, max_retries ${ivr.max_retries}: ${again ? "the menu plays again" : "plays goodbye and hangs up"}`,
    });
    if (!again) return end(walk, `goodbye from IVR ${ivr.name} after ${attempt} attempt(s)`);
  }
}

/** Whether the outbound context has an extension for `number`. */
function hasOutboundRoute(walk: Walk, number: string): boolean {
  if (number.startsWith("+")) return true; // `_+X.` drops the plus and routes again
  return outboundEntryFor(walk.state, number) !== undefined;
}

/**
 * A Goto into the outbound context: `+<digits>` drops the plus, then the most specific pattern
 * wins; the caller ID is the route's override or the caller's profile (SPEC.md §4.5 rules 2-5).
 */
function enterOutbound(walk: Walk, dialled: string, callerExt?: string, leg = false): Outcome {
  const { state, names } = walk;
  let number = dialled;
  if (number.startsWith("+")) {
    add(walk, {
      context: names.outbound,
      exten: "_+X.",
      kind: "outbound",
      subroutine: leg,
      text: `${number}: drops the plus and routes ${number.slice(1)} again`,
    });
    number = number.slice(1);
  }
  const entry = outboundEntryFor(state, number);
  if (!entry) {
    add(walk, {
      context: names.outbound,
      exten: number,
      kind: "end",
      subroutine: leg,
      text: `no outbound route matches ${number}: the call ends`,
    });
    return end(walk, `no outbound route for ${number}`);
  }
  const { route, trunk } = entry;
  const sent = `${route.prepend_digits}${number.slice(route.strip_digits)}`;
  add(walk, {
    context: names.outbound,
    exten: entry.pattern,
    kind: "outbound",
    subroutine: leg,
    node: nodeName.phone(dialled),
    text: `route ${route.name} (pattern ${entry.pattern}): dials ${sent} via trunk ${trunk.name}`,
  });
  const user = callerExt
    ? state.users.find((u) => u.extension === callerExt && isReachableUser(u))
    : undefined;
  const resolved = resolveUserCallerId(state, user ?? null);
  add(walk, {
    context: names.caller,
    exten: user ? user.extension : "s",
    kind: "caller_id",
    subroutine: true,
    text: route.caller_id_override
      ? overrideText(route.caller_id_override)
      : callerIdComment(resolved),
  });
  walk.dialOut = {
    number: sent,
    trunk: trunk.name,
    caller_id: route.caller_id_override
      ? gatewayRangeCheck(route.caller_id_override)
      : resolved.number,
  };
  return end(walk, `dialled out: ${sent} via trunk ${trunk.name}`);
}

function overrideText(override: string): string {
  const number = gatewayRangeCheck(override);
  const range = number === SENTINEL_DID ? ", outside the owned range: the sentinel" : "";
  return `caller ID ${number}: the route's caller_id_override ${override}${range}`;
}

/** The gateway answers a DID only on its own deployment (SPEC.md §4.5 inbound DID dispatch). */
function environmentNote(environment: string): string {
  return environment === "prod"
    ? ""
    : ` (routing_environment ${environment}: only the ${environment} deployment's gateway sends it here)`;
}
