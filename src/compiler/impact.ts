// What a change means for callers, in plain words, for `plan` and `apply --dry-run`: one line
// per change above the file diff. Routing moves and queue membership get sentences ("DID
// +918065978001 moves from IVR Main (5000) to queue Sales (2000)", "user 1002 leaves queue
// Support"); other changes are field-level (`~ ivr Main (5000): timeout 10 → 7`). Secrets never
// appear: credentials are compared, not printed.

import {
  COLLECTION_KINDS,
  type CollectionName,
  collectionKind,
  type ItemOf,
} from "../model/collections.js";
import { assertNever } from "../model/destinations.js";
import {
  type Did,
  type Ivr,
  type OrgState,
  type OutboundRoute,
  type Queue,
  type TimeCondition,
  type Trunk,
  type User,
  WEEKDAYS,
} from "../model/org-state.js";
import {
  dayList,
  exceptionDays,
  MINUTES_PER_DAY,
  openMinutes,
  rangeText,
  timeOfDay,
} from "../model/time-conditions.js";
import {
  type Destination,
  didDestination,
  menuOptions,
  optionDestination,
  queueTimeoutDestination,
  timeConditionDestination,
} from "./routing.js";

export interface OrgImpact {
  orgId: string;
  org: string;
  /** One line for the org: what kind of change, how many. */
  summary: string;
  /** One line per change, in a stable order (DIDs, IVRs, queues, users, routes, trunks). */
  lines: string[];
}

/** How a destination reads in an impact line. */
export function describeDestination(destination: Destination): string {
  switch (destination.kind) {
    case "user":
      return `user ${destination.user.extension} (${destination.user.name})`;
    case "queue":
      return `queue ${destination.queue.name} (${destination.queue.number})`;
    case "ivr":
      return `IVR ${destination.ivr.name} (${destination.ivr.extension})`;
    case "phone":
      return `phone ${destination.number}`;
    case "voicemail":
      return `voicemail ${destination.mailbox}`;
    case "callback":
      return `callback ${destination.number}`;
    case "time_condition":
      return `time condition ${destination.timeCondition.name}`;
    case "hangup":
      return "goodbye and hang up";
    case "end":
      return "hang up";
    case "not_in_service":
      return "not in service";
    case "invalid":
      return `nowhere (${destination.message})`;
    default:
      return assertNever(destination);
  }
}

/** Field -> shown value; compared before and after to write `field old → new`. */
type Fields = Record<string, string>;

function ivrFields(state: OrgState, ivr: Ivr): Fields {
  const fields: Fields = {
    name: ivr.name,
    extension: ivr.extension,
    timeout: String(ivr.timeout),
    max_retries: String(ivr.max_retries),
    status: ivr.status,
    greeting: ivr.greeting_prompt ?? "none",
    direct_extension_dial: String(ivr.direct_extension_dial),
  };
  for (const { option } of menuOptions(ivr)) {
    fields[`option ${option.digit}`] = describeDestination(optionDestination(state, ivr, option));
  }
  return fields;
}

function queueFields(state: OrgState, queue: Queue): Fields {
  const fields: Fields = {
    name: queue.name,
    number: queue.number,
    strategy: queue.strategy,
    moh: queue.moh,
    max_wait: String(queue.max_wait),
    "timeout destination": describeDestination(queueTimeoutDestination(state, queue)),
  };
  for (const m of queue.members) {
    fields[`member ${m.extension}`] = `penalty ${m.penalty}, rings ${m.ring_time} s`;
  }
  return fields;
}

function userFields(user: User): Fields {
  return {
    name: user.name,
    status: user.status,
    routing_type: user.routing_type,
    ring_target: user.ring_target,
    phone_number: user.phone_number ?? "none",
    ring_time: String(user.ring_time),
    outbound_did: user.outbound_did ?? "none",
    call_recording: String(user.call_recording),
    // Compared, never shown: a changed credential reads "changed".
    sip: JSON.stringify(user.sip ?? null),
  };
}

function timeConditionFields(state: OrgState, tc: TimeCondition): Fields {
  const fields: Fields = {
    time_zone: tc.time_zone,
    hours: tc.ranges.map(rangeText).join("; ") || "none",
    open: describeDestination(timeConditionDestination(state, tc, { branch: "open" })),
    closed: describeDestination(timeConditionDestination(state, tc, { branch: "closed" })),
  };
  tc.exceptions.forEach((exception, index) => {
    fields[`exception ${exceptionDays(exception)}`] =
      exception.destination_type === null
        ? "closed"
        : describeDestination(
            timeConditionDestination(state, tc, { branch: "exception", index, exception }),
          );
  });
  return fields;
}

/**
 * How a destination reads at each minute of the week: a time condition reads as the open or
 * closed destination its weekly ranges give then (dated exceptions are its own field lines).
 */
function weeklyReading(state: OrgState, destination: Destination): (minute: number) => string {
  if (destination.kind !== "time_condition") {
    const text = describeDestination(destination);
    return () => text;
  }
  const tc = destination.timeCondition;
  const open = openMinutes(tc);
  const openText = describeDestination(timeConditionDestination(state, tc, { branch: "open" }));
  const closedText = describeDestination(timeConditionDestination(state, tc, { branch: "closed" }));
  return (minute) => (open[minute] ? openText : closedText);
}

/** `on weekdays`, `at weekends`, `every day`, `on mon, wed`. */
function dayPhrase(days: number[]): string {
  const list = dayList(days.map((d) => WEEKDAYS[d]!));
  if (list === "mon-sun") return "every day";
  if (list === "mon-fri") return "on weekdays";
  if (list === "sat, sun") return "at weekends";
  return `on ${list}`;
}

/**
 * Where a DID's calls move at which hours, when a time condition is on either side: one sentence
 * per stretch of the day that moves the same way (`DID +91… on weekdays 17:00-19:00 moves from
 * queue Sales (2000) to voicemail 100`).
 */
function scheduleMoves(number: string, from: (m: number) => string, to: (m: number) => string) {
  const stretches = new Map<
    string,
    { days: number[]; start: number; end: number; was: string; now: string }
  >();
  for (let day = 0; day < 7; day++) {
    let start = -1;
    for (let m = 0; m <= MINUTES_PER_DAY; m++) {
      const at = day * MINUTES_PER_DAY + m;
      const differs = m < MINUTES_PER_DAY && from(at) !== to(at);
      const same =
        start >= 0 &&
        differs &&
        from(at) === from(day * MINUTES_PER_DAY + start) &&
        to(at) === to(day * MINUTES_PER_DAY + start);
      if (start >= 0 && !same) {
        const was = from(day * MINUTES_PER_DAY + start);
        const now = to(day * MINUTES_PER_DAY + start);
        const key = `${start}-${m}|${was}|${now}`;
        const stretch = stretches.get(key) ?? { days: [], start, end: m, was, now };
        stretch.days.push(day);
        stretches.set(key, stretch);
        start = -1;
      }
      if (start < 0 && differs) start = m;
    }
  }
  return [...stretches.values()]
    .sort((a, b) => a.days[0]! - b.days[0]! || a.start - b.start)
    .map((s) => {
      const hours =
        s.start === 0 && s.end === MINUTES_PER_DAY
          ? "all day"
          : `${timeOfDay(s.start)}-${timeOfDay(s.end)}`;
      return `DID ${number} ${dayPhrase(s.days)} ${hours} moves from ${s.was} to ${s.now}`;
    });
}

function didFields(did: Did): Fields {
  return {
    status: did.status,
    pool_status: did.pool_status,
    is_default: String(did.is_default),
    routing_environment: did.routing_environment,
  };
}

function routeFields(route: OutboundRoute): Fields {
  return {
    patterns: route.patterns.join(" "),
    trunk: route.trunk,
    strip_digits: String(route.strip_digits),
    prepend_digits: route.prepend_digits || "none",
    caller_id_override: route.caller_id_override ?? "none",
  };
}

function trunkFields(trunk: Trunk): Fields {
  return {
    host: trunk.host,
    port: String(trunk.port),
    transport: trunk.transport,
    username: trunk.username ?? "none",
    registration: String(trunk.registration),
    codecs: trunk.codecs.join(" "),
    match: trunk.match.join(" ") || "none",
    password: JSON.stringify([trunk.password ?? null, trunk.password_env ?? null]),
  };
}

const SECRET_FIELDS = new Set(["sip", "password"]);

/** `field old → new` for every field that differs (secrets only say they changed). */
function fieldChanges(before: Fields, after: Fields): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys.flatMap((key) => {
    const old = before[key];
    const next = after[key];
    if (old === next) return [];
    if (SECRET_FIELDS.has(key)) return [`${key} changed`];
    if (old === undefined) return [`${key} added: ${next}`];
    if (next === undefined) return [`${key} removed (was ${old})`];
    // `timeout 10 → 7`; a field named in words takes a colon: `option 3: queue Sales → user 1002`.
    return [`${key}${key.includes(" ") ? ":" : ""} ${old} → ${next}`];
  });
}

/** Items of two lists matched by id, else by their natural key. */
function match<T extends { id?: string | undefined }>(
  before: readonly T[],
  after: readonly T[],
  key: (item: T) => string,
): { added: T[]; removed: T[]; kept: [T, T][] } {
  const used = new Set<T>();
  const kept: [T, T][] = [];
  const added: T[] = [];
  for (const item of after) {
    const old =
      before.find((b) => !used.has(b) && item.id !== undefined && b.id === item.id) ??
      before.find((b) => !used.has(b) && key(b) === key(item));
    if (old) {
      used.add(old);
      kept.push([old, item]);
    } else added.push(item);
  }
  return { added, removed: before.filter((b) => !used.has(b)), kept };
}

/** Counts by kind for the summary line. */
class Tally {
  private counts = new Map<string, number>();
  add(kind: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }
  text(): string {
    return [...this.counts].map(([kind, n]) => `${n} ${kind}${n === 1 ? "" : "s"}`).join(", ");
  }
}

/** The impact of changing one org from `before` to `after` (either may be absent). */
export function orgImpact(before: OrgState | undefined, after: OrgState | undefined): OrgImpact {
  const state = (after ?? before)!;
  const impact: OrgImpact = { orgId: state.org.id, org: state.org.name, summary: "", lines: [] };
  if (!before || !after) {
    const counts = `${state.users.length} user(s), ${state.queues.length} queue(s), ${state.ivrs.length} IVR(s), ${state.dids.length} DID(s)`;
    impact.lines.push(
      `${before ? "-" : "+"} org ${state.org.name} ${before ? "removed" : "added"}: ${counts}`,
    );
    impact.summary = `${state.org.name}: ${before ? "removed" : "new org"}`;
    return impact;
  }
  const tally = new Tally();
  const lines = impact.lines;
  const listChanges = <C extends CollectionName>(
    kind: string,
    name: C,
    fields: (state: OrgState, item: ItemOf<C>) => Fields,
  ) => {
    const { naturalKey, label } = collectionKind(name);
    const m = match<ItemOf<C>>(before[name], after[name], naturalKey);
    for (const item of m.added) {
      lines.push(`+ ${label(item)} added`);
      tally.add(kind);
    }
    for (const item of m.removed) {
      lines.push(`- ${label(item)} removed`);
      tally.add(kind);
    }
    for (const [old, next] of m.kept) {
      const changes = fieldChanges(fields(before, old), fields(after, next));
      if (changes.length === 0) continue;
      lines.push(`~ ${label(old)}: ${changes.join(", ")}`);
      tally.add(kind);
    }
  };

  // DIDs: where calls go is the headline, in a sentence.
  const dids = match(before.dids, after.dids, COLLECTION_KINDS.dids.naturalKey);
  for (const did of dids.added) {
    lines.push(
      `+ DID ${did.number} added: goes to ${describeDestination(didDestination(after, did))}`,
    );
    tally.add("DID");
  }
  for (const did of dids.removed) {
    lines.push(
      `- DID ${did.number} removed (went to ${describeDestination(didDestination(before, did))})`,
    );
    tally.add("DID");
  }
  for (const [old, next] of dids.kept) {
    const from = describeDestination(didDestination(before, old));
    const to = describeDestination(didDestination(after, next));
    const changes = fieldChanges(didFields(old), didFields(next));
    const fromDestination = didDestination(before, old);
    const toDestination = didDestination(after, next);
    const scheduled =
      fromDestination.kind === "time_condition" || toDestination.kind === "time_condition";
    const moves = scheduled
      ? scheduleMoves(
          next.number,
          weeklyReading(before, fromDestination),
          weeklyReading(after, toDestination),
        )
      : [];
    if (moves.length > 0) lines.push(...moves);
    else if (from !== to) lines.push(`DID ${next.number} moves from ${from} to ${to}`);
    if (changes.length > 0) lines.push(`~ DID ${next.number}: ${changes.join(", ")}`);
    if (from !== to || moves.length > 0 || changes.length > 0) tally.add("DID");
  }
  listChanges("IVR", "ivrs", ivrFields);

  // Queue membership in sentences, then the other queue fields.
  const queues = match(before.queues, after.queues, COLLECTION_KINDS.queues.naturalKey);
  for (const [old, next] of queues.kept) {
    const was = new Set(old.members.map((m) => m.extension));
    const now = new Set(next.members.map((m) => m.extension));
    for (const m of next.members) {
      if (was.has(m.extension)) continue;
      lines.push(`user ${m.extension} joins queue ${next.name}`);
      tally.add("queue membership");
    }
    for (const m of old.members) {
      if (now.has(m.extension)) continue;
      lines.push(`user ${m.extension} leaves queue ${next.name}`);
      tally.add("queue membership");
    }
  }
  listChanges("queue", "queues", (s, q) => {
    // Joins and leaves are sentences above; field lines compare only members on both sides.
    const fields = queueFields(s, q);
    const peer = (s === before ? after : before).queues.find(
      (x) => (q.id !== undefined && x.id === q.id) || x.number === q.number,
    );
    for (const key of Object.keys(fields)) {
      const extension = key.startsWith("member ") ? key.slice("member ".length) : null;
      if (extension && peer && !peer.members.some((m) => m.extension === extension)) {
        delete fields[key];
      }
    }
    return fields;
  });
  listChanges("time condition", "time_conditions", timeConditionFields);
  listChanges("user", "users", (_s, u) => userFields(u));
  listChanges("outbound route", "outbound_routes", (_s, r) => routeFields(r));
  listChanges("trunk", "trunks", (_s, t) => trunkFields(t));
  const settings = fieldChanges(
    { name: before.org.name, status: before.org.status, ...stringify(before.org.settings) },
    { name: after.org.name, status: after.org.status, ...stringify(after.org.settings) },
  );
  if (settings.length > 0) {
    lines.push(`~ org ${after.org.name}: ${settings.join(", ")}`);
    tally.add("org setting");
  }
  impact.summary =
    lines.length === 0
      ? `${after.org.name}: no change callers would notice`
      : `${after.org.name}: ${tally.text() || `${lines.length} change(s)`}`;
  return impact;
}

function stringify(record: Record<string, unknown>): Fields {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, String(v)]));
}

/** The impact of every org that differs between two sets of orgs (matched by org id). */
export function impactOf(before: readonly OrgState[], after: readonly OrgState[]): OrgImpact[] {
  const ids = [...new Set([...before, ...after].map((s) => s.org.id))].sort();
  return ids
    .map((id) =>
      orgImpact(
        before.find((s) => s.org.id === id),
        after.find((s) => s.org.id === id),
      ),
    )
    .filter((impact) => impact.lines.length > 0);
}
