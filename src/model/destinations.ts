// The one table of destination kinds: what a DID route, an IVR menu option or a queue timeout
// may send a call to. Each field spells its kinds its own way (SPEC.md §2 and §4.4: a DID routes
// to an `extension` or `external`, a queue times out to a `user` or a `phone`), and each spelling
// names one kind below; the rules of a kind (what it refers to, what a bad reference says, how it
// is stored, what it resolves to) are written once, in DESTINATION_KINDS. Validation, the routing
// resolvers, DID canonicalisation, the dialplan, the simulator, the call graph and impact lines
// all go through it, and every `switch` over a kind ends in `assertNever`, so a new kind fails to
// compile until each of them handles it.
import {
  type ACTION_TYPES,
  type DID_ROUTING_TYPES,
  type Ivr,
  isVoicemailMailbox,
  type OrgState,
  type QUEUE_TIMEOUT_TYPES,
  type Queue,
  type TIME_CONDITION_DESTINATION_TYPES,
  type TimeCondition,
  type User,
} from "./org-state.js";
import { findIvr, findQueue, findTimeCondition, findUser } from "./refs.js";

/** Makes a `switch` exhaustive: a kind left out leaves a value here, which fails to compile. */
export function assertNever(value: never): never {
  throw new Error(`unhandled kind: ${JSON.stringify(value)}`);
}

/** The kinds a destination field may name. */
export type DestinationKind =
  | "user"
  | "ai_agent"
  | "queue"
  | "ivr"
  | "phone"
  | "voicemail"
  | "callback"
  | "hangup"
  | "time_condition"
  | "none";

/** Where a DID, a menu option or a queue timeout sends the call, resolved against the org. */
export type Destination =
  | { kind: "user"; user: User }
  | { kind: "queue"; queue: Queue }
  | { kind: "ivr"; ivr: Ivr }
  | { kind: "phone"; number: string }
  | { kind: "voicemail"; mailbox: string }
  | { kind: "callback"; number: string }
  /** A business-hours schedule: its open, closed or exception destination, by the time of the call. */
  | { kind: "time_condition"; timeCondition: TimeCondition }
  /** The goodbye prompt, then hang up (the menu option of that name). */
  | { kind: "hangup" }
  /** Hang up without a word (a queue with no timeout destination). */
  | { kind: "end" }
  /** A DID with no routing: the caller hears number-not-in-service. */
  | { kind: "not_in_service" }
  /** The data names nothing usable; `field` is the part of the record that is wrong. */
  | { kind: "invalid"; field: "action_type" | "action_destination"; message: string };

/** DID `routing_type` spellings (SPEC.md §2) and the kind each names. */
export const DID_ROUTE_KINDS = {
  extension: "user",
  queue: "queue",
  ivr: "ivr",
  external: "phone",
  time_condition: "time_condition",
} as const satisfies Record<(typeof DID_ROUTING_TYPES)[number], DestinationKind>;

/** IVR option `action_type` spellings (SPEC.md §4.4 rule 3) and the kind each names. */
export const IVR_ACTION_KINDS = {
  extension: "user",
  queue: "queue",
  ivr: "ivr",
  ai_agent: "ai_agent",
  voicemail: "voicemail",
  callback: "callback",
  hangup: "hangup",
  time_condition: "time_condition",
} as const satisfies Record<(typeof ACTION_TYPES)[number], DestinationKind>;

/** Queue `timeout_destination_type` spellings (SPEC.md §2) and the kind each names. */
export const QUEUE_TIMEOUT_KINDS = {
  none: "none",
  user: "user",
  queue: "queue",
  phone: "phone",
  time_condition: "time_condition",
} as const satisfies Record<(typeof QUEUE_TIMEOUT_TYPES)[number], DestinationKind>;

/**
 * A time condition's open, closed and exception destination spellings and the kind each names.
 * No time condition: a schedule leads to a place, never to another schedule (no loops of them).
 */
export const TIME_CONDITION_KINDS = {
  extension: "user",
  queue: "queue",
  ivr: "ivr",
  voicemail: "voicemail",
  external: "phone",
  hangup: "hangup",
} as const satisfies Record<(typeof TIME_CONDITION_DESTINATION_TYPES)[number], DestinationKind>;

/** A phone number as the specification means it: optional `+`, then 7 to 15 digits. */
export function looksLikePhoneNumber(value: string): boolean {
  return /^\+?[0-9]{7,15}$/.test(value);
}

/** SPEC.md §7's message for a number that fails looksLikePhoneNumber. */
export function badPhoneNumberMessage(value: string): string {
  return `Phone number ${value} does not look like a valid number (need 7-15 digits)`;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** How a reference was meant (`id` or by number/extension), for messages. */
function refKind(ref: string, byNumber: "number" | "extension"): string {
  return UUID.test(ref) ? `id ${ref}` : `${byNumber} ${ref}`;
}

/** Where a destination is checked: the record holding the field, and how a dead end reads. */
export interface DestinationSite {
  /** The queue or IVR holding the field: a destination may not lead back into it. */
  self?: Queue | Ivr;
  /** The end of "IVR 'Main' is inactive, so ...": `this option leads nowhere`. */
  leadsNowhere: string;
}

/** A problem of a destination, as validation reports it. */
export interface DestinationProblem {
  message: string;
  severity: "error" | "warning";
}

const error = (message: string): DestinationProblem => ({ message, severity: "error" });

/** The rules of one destination kind. */
interface KindRule {
  /** Whether the field names an object of the org (a user, queue, IVR) rather than a value. */
  refersToObject: boolean;
  /** What validation says about `ref` in `site`; undefined when it is fine. */
  problem(state: OrgState, ref: string, site: DestinationSite): DestinationProblem | undefined;
  /** Where a call goes, or a message when `ref` names nothing usable. */
  resolve(state: OrgState, ref: string, self?: Queue | Ivr): Destination | string;
  /** The reference as it is stored (SPEC.md §2): what the caller wrote, made canonical. */
  stored(state: OrgState, ref: string): string;
}

const asWritten = (_state: OrgState, ref: string) => ref;

const userRule: KindRule = {
  refersToObject: true,
  problem: (state, ref) =>
    state.users.some((u) => u.extension === ref)
      ? undefined
      : error(`no user with extension ${ref}`),
  resolve: (state, ref) => {
    const user = findUser(state, ref);
    return user ? { kind: "user", user } : `no user with extension ${ref}`;
  },
  stored: (state, ref) => findUser(state, ref)?.extension ?? ref,
};

/** Every destination kind's rules: one entry per kind, so none can be left out. */
export const DESTINATION_KINDS = {
  user: userRule,
  ai_agent: {
    ...userRule,
    problem: (state, ref) => {
      const user = findUser(state, ref);
      if (!user) return error(`no user with ${refKind(ref, "extension")}`);
      if (user.routing_type !== "ai_agent") {
        return error(`user '${user.name}' (${user.extension}) is not an ai_agent user`);
      }
      return undefined;
    },
  },
  queue: {
    refersToObject: true,
    problem: (state, ref, site) => {
      const target = findQueue(state, ref);
      if (!target) return error(`no queue with ${refKind(ref, "number")}`);
      if (target === site.self) return error("a queue cannot time out into itself");
      return undefined;
    },
    resolve: (state, ref, self) => {
      const queue = findQueue(state, ref);
      return queue && queue !== self ? { kind: "queue", queue } : `no queue ${ref}`;
    },
    stored: (state, ref) => findQueue(state, ref)?.number ?? ref,
  },
  ivr: {
    refersToObject: true,
    problem: (state, ref, site) => {
      const target = findIvr(state, ref);
      if (!target) return error(`no IVR with ${refKind(ref, "extension")}`);
      if (target === site.self) return error("an IVR option cannot go to its own IVR");
      if (target.status !== "active") {
        return {
          message: `IVR '${target.name}' is inactive, so ${site.leadsNowhere}`,
          severity: "warning",
        };
      }
      return undefined;
    },
    resolve: (state, ref, self) => {
      const ivr = findIvr(state, ref);
      return ivr && ivr !== self ? { kind: "ivr", ivr } : `no other IVR ${ref}`;
    },
    // The IVR is stored by UUID, never by its extension (SPEC.md §4.4 rule 5).
    stored: (state, ref) => findIvr(state, ref)?.id ?? ref,
  },
  phone: {
    refersToObject: false,
    problem: (_state, ref) =>
      looksLikePhoneNumber(ref) ? undefined : error(badPhoneNumberMessage(ref)),
    resolve: (_state, ref) =>
      looksLikePhoneNumber(ref) ? { kind: "phone", number: ref } : badPhoneNumberMessage(ref),
    stored: asWritten,
  },
  voicemail: {
    refersToObject: false,
    problem: (_state, ref) =>
      isVoicemailMailbox(ref) ? undefined : error(`voicemail mailbox must be digits, got ${ref}`),
    resolve: (_state, ref) =>
      isVoicemailMailbox(ref)
        ? { kind: "voicemail", mailbox: ref }
        : `mailbox ${ref} must be digits`,
    stored: asWritten,
  },
  callback: {
    refersToObject: false,
    problem: (_state, ref) =>
      looksLikePhoneNumber(ref) ? undefined : error(badPhoneNumberMessage(ref)),
    resolve: (_state, ref) =>
      looksLikePhoneNumber(ref) ? { kind: "callback", number: ref } : badPhoneNumberMessage(ref),
    stored: asWritten,
  },
  hangup: {
    refersToObject: false,
    problem: () => undefined,
    resolve: () => ({ kind: "hangup" }),
    stored: asWritten,
  },
  time_condition: {
    refersToObject: true,
    problem: (state, ref) =>
      findTimeCondition(state, ref) ? undefined : error(`no time condition named ${ref}`),
    resolve: (state, ref) => {
      const timeCondition = findTimeCondition(state, ref);
      return timeCondition
        ? { kind: "time_condition", timeCondition }
        : `no time condition named ${ref}`;
    },
    // Stored by name, as files write it (the name is the schedule's natural key).
    stored: (state, ref) => findTimeCondition(state, ref)?.name ?? ref,
  },
  none: {
    refersToObject: false,
    problem: () => undefined,
    resolve: () => ({ kind: "end" }),
    stored: asWritten,
  },
} as const satisfies Record<DestinationKind, KindRule>;

/**
 * Where `ref` of `kind` sends the call. A reference to an object the org lacks reads
 * `unresolved(ref)` when the field says so (DIDs and queue timeouts have one wording for all),
 * else the kind's own message.
 */
export function resolveDestination(
  state: OrgState,
  kind: DestinationKind,
  ref: string,
  self?: Queue | Ivr,
  unresolved?: (ref: string) => string,
): Destination {
  const rule = DESTINATION_KINDS[kind];
  const resolved = rule.resolve(state, ref, self);
  if (typeof resolved !== "string") return resolved;
  const message = unresolved && rule.refersToObject ? unresolved(ref) : resolved;
  return { kind: "invalid", field: "action_destination", message };
}
