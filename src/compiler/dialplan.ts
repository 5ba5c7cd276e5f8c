// Builds an org's extensions.conf view: every dialplan rule of SPEC.md §4.4 (IVR publish rules),
// §2 (queue timeout destinations, ring targets, recording) and §4.5 (caller ID, DID dispatch).
//
// Contexts of one org (names.ts):
//   internal   where the org's phones start; users, then includes IVR -> queue -> outbound (§4.4 rule 4)
//   dial       how each user is rung (softphone or mobile), with the ring time as ARG1
//   caller     per-caller outbound profile looked up by bare extension: caller ID, recording
//   record     starts MixMonitor once per call        limit   the concurrent call limit
//   ivr        one entry per active IVR extension     ivrm_<ext>  that IVR's menu, t and i
//   queue      one entry per queue                    qmember     member legs with ring times
//   outbound   routes, and `+<digits>` re-entering    incoming    DIDs (all their aliases)
//   tc_<name>  one per time condition: GotoIfTime in its time zone to open, closed or an exception

import {
  compareAscii,
  orgFallbackDid,
  REQUEST_CALLER_ID_VARIABLE,
  type ResolvedCallerId,
  resolveUserCallerId,
} from "../model/caller-id.js";
import { isE164 } from "../model/consent.js";
import { assertNever } from "../model/destinations.js";
import {
  type Ivr,
  type IvrOption,
  type OrgState,
  type OutboundRoute,
  type Queue,
  type TimeCondition,
  type TimeRange,
  type User,
  Uuid,
  WEEKDAYS,
} from "../model/org-state.js";
import {
  didAliases,
  gatewayRangeCheck,
  internationalDigits,
  SENTINEL_DID,
} from "../model/phone.js";
import { findUser, isUsableDid } from "../model/refs.js";
import {
  dateDigits,
  lastDate,
  MINUTES_PER_DAY,
  minuteOfDay,
  timeOfDay,
} from "../model/time-conditions.js";
import { assertToken, commentText, runtimeDigits } from "./escape.js";
import { orgMohClass, queueMohClass } from "./musiconhold.js";
import { CDR_VARIABLES, type OrgNames, orgNames } from "./names.js";
import {
  type Destination,
  DIGIT_ORDER,
  didDestination,
  directDialUsers,
  isPublished,
  isReachableUser,
  menuOptions,
  optionDestination,
  outboundEntries,
  queueTimeoutDestination,
  timeConditionDestination,
} from "./routing.js";
import type { Diagnostic } from "./types.js";
import type { DialplanContext, DialplanExtension, DialplanStep, DialplanView } from "./views.js";

/** Stock prompts (ASTERISK.md, and Asterisk's core sound set). */
export const PROMPTS = {
  goodbye: "vm-goodbye",
  invalid: "pbx-invalid",
  notInService: "ss-noservice",
  busy: "all-circuits-busy-now",
  callbackConfirm: "auth-thankyou",
} as const;

function step(app: string, label = ""): DialplanStep {
  return { first: false, label, app };
}

function extension(
  exten: string,
  steps: DialplanStep[],
  comments: string[] = [],
): DialplanExtension {
  steps[0]!.first = true;
  return { exten: assertToken(exten, "extension"), comments: comments.map(commentText), steps };
}

function context(
  name: string,
  extensions: DialplanExtension[],
  options: { comments?: string[]; includes?: string[] } = {},
): DialplanContext {
  return {
    name: assertToken(name, "context"),
    comments: (options.comments ?? []).map(commentText),
    includes: options.includes ?? [],
    extensions,
  };
}

const goto = (ctx: string, exten: string, priority: number | string = 1) =>
  `Goto(${assertToken(ctx, "context")},${assertToken(exten, "extension")},${priority})`;

const byAscii =
  <T>(key: (item: T) => string) =>
  (a: T, b: T) =>
    compareAscii(key(a), key(b));

/** What the compiler needs, derived once per org. */
interface Plan {
  state: OrgState;
  names: OrgNames;
  diagnostics: Diagnostic[];
  orgId: string;
  activeUsers: User[];
  recording: boolean;
  limit: number;
  /** The org's own music-on-hold class, null while it has no files. */
  mohClass: string | null;
  /** Numbers that refused recording (E.164), while the org records anything. */
  consentRefused: readonly string[];
}

function error(plan: Plan, path: string, message: string): void {
  plan.diagnostics.push({ severity: "error", path, message });
}

function warning(plan: Plan, path: string, message: string): void {
  plan.diagnostics.push({ severity: "warning", path, message });
}

function userRecords(plan: Plan, user: User): boolean {
  return plan.recording && user.call_recording;
}

/**
 * Marks the call as this org's (inherited by every channel it creates) and, while the org has
 * hold music of its own, makes it what the caller hears on hold.
 */
function orgEntrySteps(plan: Plan, mohClass = plan.mohClass): DialplanStep[] {
  const steps = [step(`Set(__ORG_ID=${plan.orgId})`)];
  // Asterisk prefers the channel's class over a queue's or a holding phone's suggestion
  // (musiconhold.conf `preferchannelclass`), so a queue entry sets the queue's own class.
  if (plan.mohClass !== null) steps.push(step(`Set(CHANNEL(musicclass)=${mohClass})`));
  return steps;
}

/** The concurrent call limit check, where the org has one. */
function limitSteps(plan: Plan): DialplanStep[] {
  return plan.limit > 0 ? [step(`Gosub(${plan.names.limit},s,1)`)] : [];
}

function internalContext(plan: Plan): DialplanContext {
  const { names } = plan;
  const users = plan.activeUsers.map((user) =>
    extension(
      user.extension,
      [
        ...orgEntrySteps(plan),
        ...(userRecords(plan, user) ? [step(`Gosub(${names.record},s,1)`)] : []),
        step(`Gosub(${names.dial},${user.extension},1(${user.ring_time}))`),
        step("Hangup()"),
      ],
      [`user ${user.name}${user.routing_type === "ai_agent" ? " (AI agent)" : ""}`],
    ),
  );
  return context(names.internal, users, {
    comments: ["phones of this org start here. Include order: IVR, queue, outbound"],
    includes: [names.ivr, names.queue, names.outbound],
  });
}

function dialContext(plan: Plan): DialplanContext {
  const { names } = plan;
  const entries: DialplanExtension[] = [];
  plan.activeUsers.forEach((user) => {
    if (user.ring_target === "phone") {
      if (!user.phone_number) return; // reported by validation
      // The mobile leg leaves through the org's outbound routes as if the user called out, so
      // the user's own outbound caller ID applies (SPEC.md §4.5 rule 2, ring_target phone).
      entries.push(
        extension(
          user.extension,
          [
            step(`Set(__CALLER_EXT=${user.extension})`),
            step(
              `Dial(Local/${assertToken(user.phone_number, "phone number")}@${names.outbound}/n,\${ARG1})`,
            ),
            step("Return()"),
          ],
          [`${user.name}: rings the mobile phone`],
        ),
      );
    } else {
      entries.push(
        extension(user.extension, softphoneSteps(names.endpoint(user.extension)), [
          `${user.name}: rings the softphone when it is registered`,
        ]),
      );
    }
  });
  return context(names.dial, entries, { comments: ["Gosub(...,<extension>,1(<ring seconds>))"] });
}

/**
 * Rings a softphone only while it has a reachable contact: `Dial(PJSIP/<endpoint>)` with none
 * logs two engine ERRORs ("Could not create dialog", "Failed to create outgoing session") for
 * what is a normal situation, a phone that is offline. The check reads only the length of
 * PJSIP_DIAL_CONTACTS (contact URIs come from the phone's REGISTER: they are never put into the
 * Dial arguments, where a `&` or `,` would dial or mean something else). An offline phone ends
 * the call as Dial's failure did: DIALSTATUS=CHANUNAVAIL and hang-up cause 3 (no route to
 * destination), so the call record stays FAILED, webhooks say `call.failed` and a queue moves
 * on to its next member. Every caller of the dial Gosub hangs up after it anyway.
 */
function softphoneSteps(endpoint: string): DialplanStep[] {
  return [
    step(`GotoIf($[\${LEN(\${PJSIP_DIAL_CONTACTS(${endpoint})})} = 0]?offline)`),
    step(`Dial(PJSIP/${endpoint},\${ARG1})`),
    step("Return()"),
    step("Set(DIALSTATUS=CHANUNAVAIL)", "offline"),
    step("Hangup(3)"),
  ];
}

const SOURCE_WORDS: Record<ResolvedCallerId["source"], string> = {
  request: "the caller_id of the API request",
  user_outbound_did: "the user's outbound_did",
  org_default_did: "the org's default DID",
  first_assigned_did: "the org's first DID by number",
  none: "no usable DID",
};

/** How a resolved caller ID came about, in words (file comments and the simulator). */
export function callerIdComment(resolved: ResolvedCallerId): string {
  const chosen = resolved.chosen === null ? "" : ` ${resolved.chosen}`;
  const range =
    resolved.source === "none"
      ? ": the sentinel"
      : resolved.number === SENTINEL_DID
        ? ", outside the owned range: the sentinel"
        : "";
  return `caller ID ${resolved.number}: ${SOURCE_WORDS[resolved.source]}${chosen}${range}`;
}

function callerContext(plan: Plan): DialplanContext {
  const { names, state } = plan;
  const entries = plan.activeUsers.map((user) => {
    const resolved = resolveUserCallerId(state, user);
    return extension(
      user.extension,
      [
        step(`Set(OUT_CID=${resolved.number})`),
        ...(userRecords(plan, user) ? [step(`Gosub(${names.record},s,1)`)] : []),
        step("Return()"),
      ],
      [callerIdComment(resolved)],
    );
  });
  const fallback = resolveUserCallerId(state, null);
  entries.push(
    extension(
      "s",
      [step(`Set(OUT_CID=${fallback.number})`), step("Return()")],
      [`callers that are not users of the org: ${callerIdComment(fallback)}`],
    ),
  );
  return context(names.caller, entries, {
    comments: ["outbound caller profile, looked up by the caller's bare extension"],
  });
}

/** The lookup that skips recording when `expression` is a number that refused it. */
function consentCheck(plan: Plan, expression: string): DialplanStep {
  return step(
    `GotoIf($[\${DIALPLAN_EXISTS(${plan.names.consentRefused},${runtimeDigits(expression)},1)} = 1]?done)`,
  );
}

function recordContext(plan: Plan): DialplanContext {
  const { names } = plan;
  // Consent (issue 16) outranks the recording switch: the caller's number, and on outbound
  // calls the number dialled (CONSENT_PEER, set by the route), are looked up first.
  const consent =
    plan.consentRefused.length > 0
      ? [consentCheck(plan, "${CALLERID(num)}"), consentCheck(plan, "${CONSENT_PEER}")]
      : [];
  return context(
    names.record,
    [
      extension("s", [
        step('GotoIf($["${RECORDING}" = "1"]?done)'),
        ...consent,
        step("Set(__RECORDING=1)"),
        // The file name reaches the call record through cdr_manager's mapping of this variable.
        step(`Set(CDR(${CDR_VARIABLES.recording})=${plan.orgId}/\${UNIQUEID}.wav)`),
        step(`MixMonitor(${plan.orgId}/\${UNIQUEID}.wav,b)`),
        step("Return()", "done"),
      ]),
    ],
    { comments: ["records a call once, whichever leg asks first"] },
  );
}

/**
 * Every way a refused number may show as a caller or a dialled number (E.164, international
 * digits, the local form of Indian numbers), one extension each: the record step only asks
 * whether the extension exists. Numbers are the schema's E.164 digits, checked again here.
 */
function consentContext(plan: Plan): DialplanContext {
  const aliases = new Set<string>();
  for (const number of plan.consentRefused) {
    if (!isE164(number))
      throw new Error(`refusing to emit consent number ${JSON.stringify(number)}`);
    for (const alias of didAliases(number)) aliases.add(assertToken(alias, "number"));
  }
  return context(
    plan.names.consentRefused,
    [...aliases].sort(compareAscii).map((alias) => extension(alias, [step("Hangup()")])),
    { comments: ["numbers that refused recording: looked up by the record step, never dialled"] },
  );
}

function limitContext(plan: Plan): DialplanContext {
  const { names } = plan;
  const group = `${plan.orgId}@${names.callGroup}`;
  return context(
    names.limit,
    [
      extension("s", [
        step(`Set(GROUP(${names.callGroup})=${plan.orgId})`),
        step(`GotoIf($[\${GROUP_COUNT(${group})} > ${plan.limit}]?busy)`),
        step("Return()"),
        step("Answer()", "busy"),
        step(`Playback(${PROMPTS.busy})`),
        step("Hangup()"),
      ]),
    ],
    { comments: [`at most ${plan.limit} concurrent calls; the next one hears a busy prompt`] },
  );
}

/** Longest a call stays on hold (seconds): a held party whose phone went away is not kept forever. */
export const HOLD_MAX_SECONDS = 3600;

/**
 * Where the API puts a live call on hold (src/domain/calls/call-control.ts): AMI Redirect sends the
 * held party to `s` (the org's own music, else Asterisk's `default` class) and the phone's leg
 * to `park` (silence) in one action, out of their bridge; unhold bridges the two again (AMI
 * Bridge). A channel leaving that bridge resumes at its next priority here, so when one side
 * hangs up after the unhold the other is hung up too. Nothing includes this context: only the
 * API's Redirect enters it.
 */
function holdContext(plan: Plan): DialplanContext {
  return context(
    plan.names.hold,
    [
      extension("s", [
        step(`MusicOnHold(${plan.mohClass ?? "default"},${HOLD_MAX_SECONDS})`),
        step("Hangup()"),
      ]),
      extension("park", [step(`Wait(${HOLD_MAX_SECONDS})`), step("Hangup()")]),
    ],
    { comments: ["calls on hold through the API: the held party hears music, the phone waits"] },
  );
}

function hangupSteps(): DialplanStep[] {
  return [step(`Playback(${PROMPTS.goodbye})`), step("Hangup()")];
}

/**
 * The steps that send the call to `destination` (SPEC.md §4.4 rule 3, §2 DID routing and queue
 * timeouts). Null for an invalid destination: each caller decides what that becomes.
 */
function destinationSteps(plan: Plan, destination: Destination): DialplanStep[] | null {
  const { names } = plan;
  switch (destination.kind) {
    case "user":
      return [step(goto(names.internal, destination.user.extension))];
    case "queue":
      return [step(goto(names.queue, destination.queue.number))];
    case "ivr":
      return [step(goto(names.ivr, destination.ivr.extension))];
    case "phone":
      return [step(goto(names.outbound, destination.number))];
    case "voicemail":
      return [
        step(`VoiceMail(${assertToken(destination.mailbox, "mailbox")}@${names.voicemail},u)`),
        step("Hangup()"),
      ];
    case "callback":
      return [
        step(`Set(DB(callback/${plan.orgId}/\${UNIQUEID})=${runtimeDigits("${CALLERID(num)}")})`),
        step(
          `UserEvent(CallbackRequested,OrgId: ${plan.orgId},Caller: ${runtimeDigits("${CALLERID(num)}")},Destination: ${assertToken(destination.number, "phone number")})`,
        ),
        step(`Playback(${PROMPTS.callbackConfirm})`),
        step("Hangup()"),
      ];
    case "hangup":
      return hangupSteps();
    case "time_condition":
      return [step(goto(names.timeCondition(destination.timeCondition.name), "s"))];
    case "end":
      return [step("Hangup()")];
    case "not_in_service":
      return [step("Answer()"), step(`Playback(${PROMPTS.notInService})`), step("Hangup()")];
    case "invalid":
      return null;
    default:
      return assertNever(destination);
  }
}

/** The dialplan of one menu option (SPEC.md §4.4 publish rule 3); null when it has none. */
function optionSteps(
  plan: Plan,
  ivr: Ivr,
  option: IvrOption,
  optionPath: string,
): DialplanStep[] | null {
  const destination = optionDestination(plan.state, ivr, option);
  if (destination.kind === "invalid") {
    error(plan, `${optionPath}.${destination.field}`, destination.message);
    return null;
  }
  if (destination.kind === "ivr" && !isPublished(destination.ivr)) {
    warning(
      plan,
      `${optionPath}.action_destination`,
      `IVR ${destination.ivr.extension} is inactive, so this option leads nowhere`,
    );
  }
  return destinationSteps(plan, destination);
}

/**
 * Asterisk's day ranges for a set of weekdays, one per run of consecutive days (`mon-fri`,
 * `sat`; `*` for the whole week). pbx_timing.c reads `-` as a cyclic range; a list joined by `&`
 * would do too, but `&` is what adds a channel in Dial(), so the dialplan never writes one: each
 * run is its own GotoIfTime.
 */
function asteriskDayRuns(days: readonly number[]): string[] {
  const sorted = [...new Set(days)].sort((a, b) => a - b);
  if (sorted.length === WEEKDAYS.length) return ["*"];
  const runs: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    const first = WEEKDAYS[sorted[i]!]!;
    runs.push(i === j ? first : `${first}-${WEEKDAYS[sorted[j]!]!}`);
    i = j + 1;
  }
  return runs;
}

/**
 * One range as GotoIfTime time specs (`times,weekdays`). Asterisk's end minute is inclusive, so
 * `09:00`-`17:00` (closed from 17:00) is written `09:00-16:59`. A range past midnight is two
 * specs: Asterisk checks the weekday of the current day, so the small hours belong to the next
 * day (22:00-06:00 on fri is `22:00-23:59,fri` and `00:00-05:59,sat`).
 */
function rangeSpecs(range: TimeRange): string[] {
  const start = minuteOfDay(range.start);
  const end = minuteOfDay(range.end);
  const days = range.days.map((day) => WEEKDAYS.indexOf(day));
  const specs = (times: string, on: number[]) =>
    asteriskDayRuns(on).map((run) => `${times},${run}`);
  if (end > start) return specs(`${timeOfDay(start)}-${timeOfDay(end - 1)}`, days);
  return [
    ...specs(`${timeOfDay(start)}-${timeOfDay(MINUTES_PER_DAY - 1)}`, days),
    ...(end > 0
      ? specs(
          `00:00-${timeOfDay(end - 1)}`,
          days.map((day) => (day + 1) % 7),
        )
      : []),
  ];
}

/**
 * A time condition's context (issue 27 item 6). `s` checks, in order: each dated exception
 * (the local date from STRFTIME in the condition's zone, compared as YYYYMMDD numbers, since
 * GotoIfTime has no year), then each weekly range with GotoIfTime and the time-zone argument;
 * nothing matched is closed. Every value written is schema-checked (names, times, dates, the
 * zone) and passes assertToken.
 */
function timeConditionContext(plan: Plan, tc: TimeCondition, index: number): DialplanContext {
  const { names } = plan;
  const zone = assertToken(tc.time_zone, "time zone");
  const at = `time_conditions[${index}]`;
  const checks: DialplanStep[] = [];
  const branches: DialplanExtension[] = [];
  const branchSteps = (destination: Destination, path: string): DialplanStep[] => {
    const steps = routeOrHangup(plan, destination, path);
    // As on a DID: the call's records carry the IVR it was sent to.
    return destination.kind === "ivr"
      ? [step(`Set(__IVR_ID=${ivrId(destination.ivr)})`), ...steps]
      : steps;
  };
  if (tc.exceptions.length > 0) {
    checks.push(step(`Set(TC_TODAY=\${STRFTIME(\${EPOCH},${zone},%Y%m%d)})`));
  }
  tc.exceptions.forEach((exception, k) => {
    const first = assertToken(dateDigits(exception.start_date), "date");
    const last = assertToken(dateDigits(lastDate(exception)), "date");
    const target = exception.destination_type === null ? "closed" : `x${k}`;
    checks.push(step(`GotoIf($[\${TC_TODAY} >= ${first} & \${TC_TODAY} <= ${last}]?${target},1)`));
    if (exception.destination_type !== null) {
      const destination = timeConditionDestination(plan.state, tc, {
        branch: "exception",
        index: k,
        exception,
      });
      branches.push(
        extension(`x${k}`, branchSteps(destination, `${at}.exceptions[${k}].destination`), [
          `exception ${exception.start_date}${exception.end_date ? ` to ${exception.end_date}` : ""}${exception.name ? ` ${exception.name}` : ""}`,
        ]),
      );
    }
  });
  for (const range of tc.ranges) {
    for (const spec of rangeSpecs(range))
      checks.push(step(`GotoIfTime(${spec},*,*,${zone}?open,1)`));
  }
  checks.push(step("Goto(closed,1)"));
  const open = timeConditionDestination(plan.state, tc, { branch: "open" });
  const closed = timeConditionDestination(plan.state, tc, { branch: "closed" });
  return context(
    names.timeCondition(tc.name),
    [
      extension("s", checks, [`time condition ${tc.name} (${tc.time_zone})`]),
      extension("open", branchSteps(open, `${at}.open_destination`), ["open"]),
      extension("closed", branchSteps(closed, `${at}.closed_destination`), ["closed"]),
      ...branches,
    ],
    { comments: tc.description ? [tc.description] : [] },
  );
}

function timeConditionContexts(plan: Plan): DialplanContext[] {
  return plan.state.time_conditions
    .map((tc, index) => ({ tc, index }))
    .sort(byAscii(({ tc }) => tc.name))
    .map(({ tc, index }) => timeConditionContext(plan, tc, index));
}

/** Steps for a DID or a queue timeout: an invalid destination is an error and a hangup. */
function routeOrHangup(plan: Plan, destination: Destination, path: string): DialplanStep[] {
  const steps = destinationSteps(plan, destination);
  if (steps && destination.kind !== "invalid") return steps;
  if (destination.kind === "invalid") error(plan, path, destination.message);
  return [step("Hangup()")];
}

function retrySteps(ivr: Ivr, menu: string, first: DialplanStep[] = []): DialplanStep[] {
  return [
    ...first,
    // ${IVR_RETRIES} stays a run-time variable (publish rule 2).
    step("Set(IVR_RETRIES=$[${IVR_RETRIES} + 1])"),
    step(`GotoIf($[\${IVR_RETRIES} < ${ivr.max_retries}]?${menu},s,start)`),
    ...hangupSteps(),
  ];
}

function ivrContexts(plan: Plan): DialplanContext[] {
  const { names, state } = plan;
  const active = state.ivrs
    .map((ivr, index) => ({ ivr, index }))
    .filter(({ ivr }) => isPublished(ivr))
    .sort(byAscii(({ ivr }) => ivr.extension));
  const entries = active.map(({ ivr }) =>
    extension(
      ivr.extension,
      [
        ...orgEntrySteps(plan),
        step("Set(IVR_RETRIES=0)"),
        step(goto(names.ivrMenu(ivr.extension), "s")),
      ],
      [`IVR ${ivr.name}`],
    ),
  );
  const contexts = [context(names.ivr, entries, { comments: ["one entry per active IVR"] })];
  for (const { ivr, index } of active) contexts.push(menuContext(plan, ivr, index));
  return contexts;
}

function menuContext(plan: Plan, ivr: Ivr, index: number): DialplanContext {
  const { names } = plan;
  const menu = names.ivrMenu(ivr.extension);
  const greeting = ivr.greeting_prompt
    ? step(`Background(greetings/${assertToken(ivr.greeting_prompt, "greeting")})`, "start")
    : step("NoOp(no greeting generated yet)", "start");
  const entries = [
    extension(
      "s",
      [step("Answer()"), greeting, step(`WaitExten(${ivr.timeout})`)],
      [`IVR ${ivr.name} (${ivr.id ?? "no id"})`],
    ),
  ];
  for (const { option, optionIndex } of menuOptions(ivr)) {
    const path = `ivrs[${index}].options[${optionIndex}]`;
    if (!DIGIT_ORDER.includes(option.digit)) {
      error(plan, `${path}.digit`, `Invalid digit: ${option.digit}`);
      continue;
    }
    const steps = optionSteps(plan, ivr, option, path);
    if (steps) {
      const label = option.description
        ? `${option.action_type}: ${option.description}`
        : option.action_type;
      entries.push(extension(option.digit, steps, [label]));
    }
  }
  for (const user of directDialUsers(ivr, plan.activeUsers)) {
    entries.push(
      extension(
        user.extension,
        [step(goto(names.internal, user.extension))],
        [`direct dial ${user.name}`],
      ),
    );
  }
  entries.push(extension("t", retrySteps(ivr, menu), ["no digit: try again, then goodbye"]));
  entries.push(
    extension("i", retrySteps(ivr, menu, [step(`Playback(${PROMPTS.invalid})`)]), [
      "invalid digit: try again, then goodbye",
    ]),
  );
  return context(menu, entries);
}

function queueContexts(plan: Plan): DialplanContext[] {
  const { names, state } = plan;
  const queues = state.queues
    .map((queue, index) => ({ queue, index }))
    .sort(byAscii(({ queue }) => queue.number));
  const entries = queues.map(({ queue, index }) =>
    extension(
      queue.number,
      [
        ...orgEntrySteps(plan, queueMohClass(state, queue)),
        step("Answer()"),
        step(
          queue.max_wait > 0
            ? `Queue(${names.queueName(queue.number)},,,,${queue.max_wait})`
            : `Queue(${names.queueName(queue.number)})`,
        ),
        ...routeOrHangup(
          plan,
          queueTimeoutDestination(state, queue),
          `queues[${index}].timeout_destination`,
        ),
      ],
      [
        `queue ${queue.name}, then ${[queue.timeout_destination_type, queue.timeout_destination].filter(Boolean).join(" ")}`,
      ],
    ),
  );
  const members: DialplanExtension[] = [];
  for (const { queue } of queues) {
    for (const member of [...queue.members].sort(byAscii((m) => m.extension))) {
      const user = findUser(state, member.extension);
      if (!isReachableUser(user)) continue;
      members.push(
        extension(
          queueMemberExten(queue, member.extension),
          [
            ...(userRecords(plan, user) ? [step(`Gosub(${names.record},s,1)`)] : []),
            step(`Gosub(${names.dial},${user.extension},1(${member.ring_time}))`),
            step("Hangup()"),
          ],
          [`${queue.name}: ${user.name}, rings ${member.ring_time} s`],
        ),
      );
    }
  }
  return [
    context(names.queue, entries, {
      comments: ["one entry per queue; afterwards its timeout destination"],
    }),
    context(names.queueMember, members, { comments: ["queue member legs: <queue>*<extension>"] }),
  ];
}

/** The Local-channel extension that rings one member of one queue. */
export function queueMemberExten(queue: Queue, memberExtension: string): string {
  return `${queue.number}*${memberExtension}`;
}

function outboundContext(plan: Plan): DialplanContext {
  const { names, state } = plan;
  const entries = [
    extension(
      "_+X.",
      [step(`Goto(${names.outbound},${runtimeDigits("${EXTEN:1}")},1)`)],
      ["+<digits>: drop the plus and route again"],
    ),
  ];
  const { routes, problems } = outboundEntries(state);
  for (const problem of problems) error(plan, problem.path, problem.message);
  for (const { pattern, route, trunk } of routes) {
    entries.push(
      extension(pattern, routeSteps(plan, route, names.trunk(trunk.name)), [`route ${route.name}`]),
    );
  }
  return context(names.outbound, entries, { comments: ["outbound routes"] });
}

function routeSteps(plan: Plan, route: OutboundRoute, trunkEndpoint: string): DialplanStep[] {
  const { names } = plan;
  const prepend = route.prepend_digits ? assertToken(route.prepend_digits, "digits") : "";
  const dialled = runtimeDigits(
    route.strip_digits > 0 ? `\${EXTEN:${route.strip_digits}}` : "${EXTEN}",
  );
  const number = `${prepend}${dialled}`;
  const callerId = route.caller_id_override
    ? gatewayRangeCheck(route.caller_id_override)
    : "${OUT_CID}";
  return [
    ...limitSteps(plan),
    // Call history tells outbound calls apart by this record variable (cdr_manager maps it).
    step(`Set(CDR(${CDR_VARIABLES.direction})=outbound)`),
    // The number dialled, for the consent check of the record step.
    ...(plan.consentRefused.length > 0 ? [step(`Set(CONSENT_PEER=${dialled})`)] : []),
    step(`Gosub(${names.caller},\${IF($["\${CALLER_EXT}" = ""]?s:\${CALLER_EXT})},1)`),
    // Rule 1 first: a call the API placed with a checked caller_id carries it in this variable.
    step(
      `Set(CALLERID(num)=\${IF($["\${${REQUEST_CALLER_ID_VARIABLE}}" = ""]?${callerId}:\${${REQUEST_CALLER_ID_VARIABLE}})})`,
    ),
    step(`Dial(PJSIP/${number}@${trunkEndpoint})`),
    step("Hangup()"),
  ];
}

const UUID = new RegExp(Uuid.pattern!);

/**
 * The IVR's UUID as the dialplan may carry it. The schema and fillOmitted already make it one;
 * anything else reaching here is a compiler bug, so refuse rather than emit it.
 */
function ivrId(ivr: Ivr): string {
  if (ivr.id === undefined || !UUID.test(ivr.id)) {
    throw new Error(`refusing to emit IVR id ${JSON.stringify(ivr.id)}: not a UUID`);
  }
  return ivr.id;
}

/**
 * Where an inbound DID goes (SPEC.md §4.4 rule 5 and §2 DID routing). A DID routed to an IVR
 * first stores the IVR's UUID in the call (inherited by every channel it creates, for call
 * records and webhooks), then jumps to its extension.
 */
function didRouteSteps(plan: Plan, destination: Destination, path: string): DialplanStep[] {
  const steps = routeOrHangup(plan, destination, path);
  return destination.kind === "ivr"
    ? [step(`Set(__IVR_ID=${ivrId(destination.ivr)})`), ...steps]
    : steps;
}

function incomingContext(plan: Plan): DialplanContext {
  const { names, state } = plan;
  const entries: DialplanExtension[] = [];
  const dids = state.dids
    .map((did, index) => ({ did, index }))
    .filter(({ did }) => isUsableDid(did))
    .sort(byAscii(({ did }) => internationalDigits(did.number)));
  for (const { did, index } of dids) {
    const aliases = didAliases(did.number);
    const canonical = aliases[aliases.length - 1]!;
    for (const alias of aliases.slice(0, -1)) {
      entries.push(extension(alias, [step(goto(names.incoming, canonical))]));
    }
    entries.push(
      extension(
        canonical,
        [
          ...orgEntrySteps(plan),
          // CDRs of inbound calls carry the org id, which call listings filter on (SPEC.md §1).
          step(`Set(CHANNEL(accountcode)=${plan.orgId})`),
          step(`Set(CDR(${CDR_VARIABLES.direction})=inbound)`),
          ...limitSteps(plan),
          ...didRouteSteps(plan, didDestination(state, did), `dids[${index}].routing_destination`),
        ],
        [
          `DID ${did.number} -> ${[did.routing_type ?? "not routed", did.routing_destination].filter(Boolean).join(" ")}`,
        ],
      ),
    );
  }
  return context(names.incoming, entries, {
    comments: ["inbound calls, from the gateway or the org's trunks"],
  });
}

/** The org's whole dialplan view. */
export function buildDialplan(state: OrgState, diagnostics: Diagnostic[]): DialplanView {
  const plan: Plan = {
    state,
    names: orgNames(state.org.context_prefix),
    diagnostics,
    orgId: assertToken(state.org.id, "org id"),
    activeUsers: state.users.filter(isReachableUser).sort(byAscii((u) => u.extension)),
    recording: state.org.settings.recording_enabled,
    limit: state.org.settings.max_concurrent_calls,
    mohClass: orgMohClass(state),
    consentRefused: [],
  };
  if (plan.activeUsers.some((user) => userRecords(plan, user))) {
    plan.consentRefused = [...(state.recording_consent_refused ?? [])].sort(compareAscii);
  }
  const contexts = [internalContext(plan), dialContext(plan), callerContext(plan)];
  if (plan.activeUsers.some((user) => userRecords(plan, user))) contexts.push(recordContext(plan));
  if (plan.consentRefused.length > 0) contexts.push(consentContext(plan));
  if (plan.limit > 0) contexts.push(limitContext(plan));
  contexts.push(holdContext(plan));
  contexts.push(
    ...ivrContexts(plan),
    ...queueContexts(plan),
    ...timeConditionContexts(plan),
    outboundContext(plan),
    incomingContext(plan),
  );
  return {
    header: [
      `generated by pbxctl for org ${commentText(state.org.name)} (${plan.orgId}). Do not edit`,
      `org fallback caller ID: ${orgFallbackDid(state)?.number ?? "none (sentinel)"}`,
    ],
    contexts,
  };
}
