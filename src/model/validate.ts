// Semantic validation of one org: the rules a JSON Schema cannot say (references between objects,
// uniqueness, the specification's own messages). Pure: the same state gives the same diagnostics,
// so the CLI (YAML files) and the API (store rows) share it.
import {
  DESTINATION_KINDS,
  type DestinationKind,
  type DestinationSite,
  DID_ROUTE_KINDS,
  IVR_ACTION_KINDS,
  QUEUE_TIMEOUT_KINDS,
  TIME_CONDITION_KINDS,
} from "./destinations.js";
import type { Diagnostic } from "./diagnostic.js";
import {
  ACTION_TYPES,
  IVR_DIGITS,
  type Ivr,
  type OrgState,
  type Queue,
  type TimeCondition,
} from "./org-state.js";
import { inOwnedRange, SENTINEL_DID, sameNumber } from "./phone.js";
import { findDid, findTrunk, isUsableDid } from "./refs.js";
import {
  dayNumber,
  isKnownTimeZone,
  isRealDate,
  lastDate,
  MAX_EXCEPTION_DAYS,
} from "./time-conditions.js";

export { badPhoneNumberMessage, looksLikePhoneNumber } from "./destinations.js";

/** At most this many options per IVR menu (SPEC.md §8: one per digit 0-9, `*`, `#`). */
export const MAX_IVR_OPTIONS = 12;

type Report = (
  path: string,
  message: string,
  severity?: Diagnostic["severity"],
  hint?: string,
) => void;

/** Every semantic problem of the org, in a stable order (users, queues, IVRs, DIDs, trunks, routes, time conditions). */
export function validateOrg(state: OrgState): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const report: Report = (path, message, severity = "error", hint) => {
    diagnostics.push(hint ? { severity, path, message, hint } : { severity, path, message });
  };
  checkExtensionsUnique(state, diagnostics);
  checkUsers(state, report);
  checkQueues(state, report);
  state.ivrs.forEach((ivr, i) => {
    checkIvr(state, ivr, `ivrs[${i}]`, report);
  });
  checkDids(state, report);
  checkTrunksAndRoutes(state, report);
  checkTimeConditions(state, report);
  return diagnostics;
}

function isEmpty(value: string | null | undefined): boolean {
  return value === null || value === undefined || value.trim() === "";
}

/** Who can hold an extension of the org's one extension space. */
export type ExtensionHolderType = "user" | "queue" | "ivr";

/** SPEC.md §7: what a 409 says about the holder of an extension (one wording, YAML and API). */
export function extensionCollisionMessage(
  extension: string,
  holder: { type: ExtensionHolderType; name: string },
): string {
  switch (holder.type) {
    case "ivr":
      return `Extension ${extension} is already used by IVR '${holder.name}'`;
    case "queue":
      return `Extension ${extension} is already used by queue '${holder.name}'`;
    case "user":
      return `Extension ${extension} is already assigned to user '${holder.name}'`;
  }
}

// SPEC.md §7: one extension space per org across users, queue numbers and IVRs. In a file the
// first claimant (users, then queues, then IVRs, each in file order) keeps it.
function checkExtensionsUnique(state: OrgState, diagnostics: Diagnostic[]): void {
  const claims = new Map<string, { type: ExtensionHolderType; name: string }>();
  const claim = (
    extension: string,
    path: string,
    holder: { type: ExtensionHolderType; name: string },
  ) => {
    const previous = claims.get(extension);
    if (previous === undefined) claims.set(extension, holder);
    else {
      const message = extensionCollisionMessage(extension, previous);
      diagnostics.push({ severity: "error", path, message, kind: "conflict" });
    }
  };
  state.users.forEach((u, i) => {
    claim(u.extension, `users[${i}].extension`, { type: "user", name: u.name });
  });
  state.queues.forEach((q, i) => {
    claim(q.number, `queues[${i}].number`, { type: "queue", name: q.name });
  });
  state.ivrs.forEach((v, i) => {
    claim(v.extension, `ivrs[${i}].extension`, { type: "ivr", name: v.name });
  });
}

function checkUsers(state: OrgState, report: Report): void {
  state.users.forEach((user, i) => {
    const at = `users[${i}]`;
    if (user.outbound_did !== null) {
      const did = findDid(state, user.outbound_did);
      if (!did || !isUsableDid(did)) {
        report(
          `${at}.outbound_did`,
          `outbound_did ${user.outbound_did} is not an assigned, active DID of this org`,
        );
      }
    }
    if (user.ring_target === "phone") {
      if (user.phone_number === null) {
        report(`${at}.phone_number`, "phone_number required when ring_target is phone");
      }
    } else if (!user.sip?.md5_cred && !user.sip?.password_env) {
      // password_env is resolved (or reported missing) before this runs, in the file loader.
      report(`${at}.sip`, "SIP credential required: set sip.md5_cred or sip.password_env");
    }
  });
}

function checkQueues(state: OrgState, report: Report): void {
  state.queues.forEach((queue, i) => {
    const at = `queues[${i}]`;
    checkQueueTimeout(state, queue, at, report);
    const seen = new Set<string>();
    queue.members.forEach((member, k) => {
      const path = `${at}.members[${k}].extension`;
      if (!state.users.some((u) => u.extension === member.extension)) {
        report(path, `no user with extension ${member.extension}`);
      }
      if (seen.has(member.extension)) {
        report(path, `user ${member.extension} is already a member of this queue`);
      }
      seen.add(member.extension);
    });
  });
}

function checkQueueTimeout(state: OrgState, queue: Queue, at: string, report: Report): void {
  const type = queue.timeout_destination_type;
  const destination = queue.timeout_destination;
  const path = `${at}.timeout_destination`;
  if (type === "none") {
    if (!isEmpty(destination)) {
      report(path, "timeout_destination must be empty when timeout_destination_type is none");
    }
    return;
  }
  if (destination === null || isEmpty(destination)) {
    report(path, `timeout_destination required for timeout_destination_type=${type}`);
    return;
  }
  const site = { self: queue, leadsNowhere: "queue callers time out into nothing" };
  checkDestination(state, QUEUE_TIMEOUT_KINDS[type], destination, site, path, report);
}

/** The one check of a destination, whichever field names it (DID, menu option, queue timeout). */
function checkDestination(
  state: OrgState,
  kind: DestinationKind,
  destination: string,
  site: DestinationSite,
  path: string,
  report: Report,
): void {
  const problem = DESTINATION_KINDS[kind].problem(state, destination, site);
  if (problem) report(path, problem.message, problem.severity);
}

function checkIvr(state: OrgState, ivr: Ivr, at: string, report: Report): void {
  if (ivr.options.length > MAX_IVR_OPTIONS) {
    report(
      `${at}.options`,
      `at most ${MAX_IVR_OPTIONS} options per IVR (one per digit), found ${ivr.options.length}`,
    );
  }
  const digits = new Map<string, number>();
  ivr.options.forEach((option, j) => {
    const path = `${at}.options[${j}]`;
    if (!(IVR_DIGITS as readonly string[]).includes(option.digit)) {
      report(`${path}.digit`, `Invalid digit: ${option.digit}`, "error", "allowed: 0-9, * or #");
    } else {
      const first = digits.get(option.digit);
      if (first !== undefined) {
        report(`${path}.digit`, `digit ${option.digit} is already used by options[${first}]`);
      } else digits.set(option.digit, j);
    }
    checkOptionTarget(state, ivr, option, path, report);
  });
}

function checkOptionTarget(
  state: OrgState,
  ivr: Ivr,
  option: Ivr["options"][number],
  at: string,
  report: Report,
): void {
  const type = option.action_type;
  if (!Object.hasOwn(IVR_ACTION_KINDS, type)) {
    report(
      `${at}.action_type`,
      `Invalid action_type: ${type}`,
      "error",
      `allowed: ${ACTION_TYPES.join(", ")}`,
    );
    return;
  }
  const kind = IVR_ACTION_KINDS[type as keyof typeof IVR_ACTION_KINDS];
  if (kind === "hangup") return;
  const destination = option.action_destination;
  const path = `${at}.action_destination`;
  if (destination === null || isEmpty(destination)) {
    report(path, `action_destination required for action_type=${type}`);
    return;
  }
  const site = { self: ivr, leadsNowhere: "this option leads nowhere" };
  checkDestination(state, kind, destination, site, path, report);
}

function checkDids(state: OrgState, report: Report): void {
  let defaultAt: number | undefined;
  state.dids.forEach((did, i) => {
    const at = `dids[${i}]`;
    if (sameNumber(did.number, SENTINEL_DID)) {
      report(
        `${at}.number`,
        `${SENTINEL_DID} is the reserved sentinel number and cannot belong to an org`,
      );
    }
    const first = state.dids.findIndex((d) => sameNumber(d.number, did.number));
    if (first < i) report(`${at}.number`, `DID ${did.number} is already listed as dids[${first}]`);
    if (did.is_default) {
      if (defaultAt !== undefined) {
        report(`${at}.is_default`, `at most one default DID per org (dids[${defaultAt}] is one)`);
      } else defaultAt = i;
    }
    checkDidRouting(state, did, at, report);
  });
}

function checkDidRouting(
  state: OrgState,
  did: OrgState["dids"][number],
  at: string,
  report: Report,
): void {
  const type = did.routing_type;
  const destination = did.routing_destination;
  const path = `${at}.routing_destination`;
  if (type === null) {
    if (!isEmpty(destination))
      report(`${at}.routing_type`, "routing_type required with a routing_destination");
    return;
  }
  if (destination === null || isEmpty(destination)) {
    report(path, `routing_destination required for routing_type=${type}`);
    return;
  }
  const site = { leadsNowhere: "calls to this DID lead nowhere" };
  checkDestination(state, DID_ROUTE_KINDS[type], destination, site, path, report);
}

function checkTrunksAndRoutes(state: OrgState, report: Report): void {
  const trunkNames = new Map<string, number>();
  state.trunks.forEach((trunk, i) => {
    const first = trunkNames.get(trunk.name);
    if (first !== undefined) {
      report(`trunks[${i}].name`, `trunk name ${trunk.name} is already used by trunks[${first}]`);
    } else trunkNames.set(trunk.name, i);
  });
  const patterns = new Map<string, string>();
  state.outbound_routes.forEach((route, i) => {
    const at = `outbound_routes[${i}]`;
    if (!findTrunk(state, route.trunk)) report(`${at}.trunk`, `no trunk named ${route.trunk}`);
    route.patterns.forEach((pattern, k) => {
      const owner = patterns.get(pattern);
      if (owner !== undefined) {
        report(
          `${at}.patterns[${k}]`,
          `pattern ${pattern} is already used by outbound route '${owner}'`,
        );
      } else patterns.set(pattern, route.name);
    });
    const override = route.caller_id_override;
    if (override !== null && !inOwnedRange(override)) {
      report(
        `${at}.caller_id_override`,
        `caller ID ${override} is outside the owned range and will be replaced by ${SENTINEL_DID}`,
        "warning",
      );
    }
  });
}

function checkTimeConditions(state: OrgState, report: Report): void {
  const names = new Map<string, number>();
  state.time_conditions.forEach((tc, i) => {
    const at = `time_conditions[${i}]`;
    const first = names.get(tc.name);
    if (first !== undefined) {
      report(
        `${at}.name`,
        `time condition name ${tc.name} is already used by time_conditions[${first}]`,
      );
    } else names.set(tc.name, i);
    if (!isKnownTimeZone(tc.time_zone)) {
      report(
        `${at}.time_zone`,
        `unknown time zone ${tc.time_zone}`,
        "error",
        "an IANA time zone name, such as Europe/London or Asia/Kolkata",
      );
    }
    tc.ranges.forEach((range, k) => {
      const path = `${at}.ranges[${k}]`;
      if (range.start === "24:00") report(`${path}.start`, "24:00 can only end a range");
      else if (range.start === range.end) {
        report(
          `${path}.end`,
          "a range cannot end when it starts (for a whole day, use 00:00 to 24:00)",
        );
      }
    });
    tc.exceptions.forEach((exception, k) => {
      checkTimeException(state, exception, `${at}.exceptions[${k}]`, report);
    });
    checkScheduleDestination(state, tc, "open", at, report);
    checkScheduleDestination(state, tc, "closed", at, report);
  });
}

function checkTimeException(
  state: OrgState,
  exception: TimeCondition["exceptions"][number],
  path: string,
  report: Report,
): void {
  for (const field of ["start_date", "end_date"] as const) {
    const date = exception[field];
    if (date !== null && !isRealDate(date)) report(`${path}.${field}`, `no such date ${date}`);
  }
  const days = dayNumber(lastDate(exception)) - dayNumber(exception.start_date);
  if (days < 0) report(`${path}.end_date`, "end_date is before start_date");
  else if (days >= MAX_EXCEPTION_DAYS) {
    report(`${path}.end_date`, `an exception spans at most ${MAX_EXCEPTION_DAYS} days`);
  }
  const type = exception.destination_type;
  const destination = exception.destination;
  if (type === null) {
    if (!isEmpty(destination)) {
      report(`${path}.destination_type`, "destination_type required with a destination");
    }
    return;
  }
  if (type === "hangup") return;
  if (destination === null || isEmpty(destination)) {
    report(`${path}.destination`, `destination required for destination_type=${type}`);
    return;
  }
  const site = { leadsNowhere: "calls on these days lead nowhere" };
  checkDestination(
    state,
    TIME_CONDITION_KINDS[type],
    destination,
    site,
    `${path}.destination`,
    report,
  );
}

function checkScheduleDestination(
  state: OrgState,
  tc: TimeCondition,
  which: "open" | "closed",
  at: string,
  report: Report,
): void {
  const type = tc[`${which}_destination_type`];
  const destination = tc[`${which}_destination`];
  const path = `${at}.${which}_destination`;
  if (type === "hangup") return;
  if (destination === null || isEmpty(destination)) {
    report(path, `${which}_destination required for ${which}_destination_type=${type}`);
    return;
  }
  const site = { leadsNowhere: `calls while ${which} lead nowhere` };
  checkDestination(state, TIME_CONDITION_KINDS[type], destination, site, path, report);
}
