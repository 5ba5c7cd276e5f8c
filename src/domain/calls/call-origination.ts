// Calls the API places (SPEC.md §4.5): click-to-call rings the user's extension, then dials the
// number out; originate-to-ai dials the number out, then connects the org's AI agent. Both go
// through the org's own compiled contexts, so the outbound routes, the concurrent-call limit and
// the caller-ID rules of the dialplan apply exactly as for a call from a phone: the caller ID is
// resolved here only to refuse early (rules 1 and 6) and to hand a checked rule 1 caller_id to
// the route; rules 2-5 are the dialplan's, which the compiler printed from the same function.
import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.js";
import { orgNames } from "../../compiler/names.js";
import { outboundEntryFor } from "../../compiler/routing.js";
import {
  type CallerIdSource,
  REQUEST_CALLER_ID_VARIABLE,
  resolveCallerId,
} from "../../model/caller-id.js";
import type { OrgState, User } from "../../model/org-state.js";
import { badPhoneNumberMessage, looksLikePhoneNumber } from "../../model/validate.js";
import type { Db } from "../../store/database.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { BadRequest, Forbidden, NotFound, Unavailable } from "../errors.js";
import { runIdempotent } from "../idempotency.js";
import type { CallControlPort } from "./call-control.js";

export interface OriginationDeps {
  db: Db;
  clock: Clock;
  /** Absent when the server follows no engine (PBX_ENGINE none). */
  control: CallControlPort | null;
  /** Whether the engine connection is up now. */
  connected: () => boolean;
}

export interface PlacedCall {
  success: true;
  /** The call's linkedid: the first channel's unique id, as /calls and the journey show it. */
  linkedid: string;
  to: string;
  /** What the outbound leg sends as caller ID, after the gateway range check. */
  caller_id: string;
  caller_id_source: CallerIdSource;
}

export interface ClickToCallRequest {
  from: string;
  to: string;
  caller_id?: string | undefined;
}

export interface AiOriginateRequest {
  to: string;
  caller_id?: string | undefined;
}

/** How long the first leg may ring when the user has no ring time of its own (seconds). */
const AI_ANSWER_SECONDS = 45;

/** Rings `from` (a user of the org), then dials `to` out with the resolved caller ID. */
export function clickToCall(
  deps: OriginationDeps,
  orgId: string,
  request: ClickToCallRequest,
  idempotencyKey?: string,
): Promise<PlacedCall> {
  return placeOnce(deps, orgId, "click-to-call", request, idempotencyKey, (state, names) => {
    const user = state.users.find((u) => u.extension === request.from && u.status === "active");
    if (!user) throw new NotFound(`Extension ${request.from} is not an active user of the org`);
    checkNumber(request.to);
    checkRouted(state, request.to);
    return {
      // The user's phone rings first (its own internal entry: its dial logic, its ring time).
      channel: `Local/${user.extension}@${names.internal}`,
      context: names.outbound,
      exten: request.to,
      // What the user's phone shows while it rings: who it is about to call.
      callerId: () => `"${request.to}" <${request.to}>`,
      timeoutMs: user.ring_time * 1000,
      user,
      resolved: callerIdFor(state, request.caller_id, user, false),
      to: request.to,
    };
  });
}

/** Dials `to` out with the resolved caller ID, then connects the org's first active AI agent. */
export function originateToAi(
  deps: OriginationDeps,
  orgId: string,
  request: AiOriginateRequest,
  idempotencyKey?: string,
): Promise<PlacedCall> {
  return placeOnce(deps, orgId, "originate-to-ai", request, idempotencyKey, (state, names) => {
    checkNumber(request.to);
    checkRouted(state, request.to);
    const agent = aiAgentOf(state);
    return {
      // The customer is dialled first through the org's outbound routes, as the agent would.
      channel: `Local/${request.to}@${names.outbound}`,
      context: names.internal,
      exten: agent.extension,
      callerId: (number) => `"${number}" <${number}>`,
      timeoutMs: AI_ANSWER_SECONDS * 1000,
      user: agent,
      resolved: callerIdFor(state, request.caller_id, agent, true),
      to: request.to,
    };
  });
}

/** Plans one call over the org's stored state and places it, once per Idempotency-Key. */
async function placeOnce(
  deps: OriginationDeps,
  orgId: string,
  operation: string,
  request: ClickToCallRequest | AiOriginateRequest,
  idempotencyKey: string | undefined,
  plan: (state: OrgState, names: ReturnType<typeof orgNames>) => Placement,
): Promise<PlacedCall> {
  const answer = await runIdempotent(
    deps,
    { orgId, key: idempotencyKey, operation, request },
    async () => {
      const state = await loadOrgState(deps.db, orgId);
      return place(deps, state, plan(state, orgNames(state.org.context_prefix)));
    },
  );
  return answer.body;
}

/** The org's AI agent for originate: its first active `ai_agent` user by extension. */
function aiAgentOf(state: OrgState): User {
  const agents = state.users
    .filter((u) => u.routing_type === "ai_agent" && u.status === "active")
    .sort((a, b) => a.extension.localeCompare(b.extension, "en", { numeric: true }));
  const agent = agents[0];
  if (!agent) throw new BadRequest("The org has no active ai_agent user to connect the call to");
  return agent;
}

function checkNumber(to: string): void {
  // Reaches the Originate's Exten and a Local channel name: digits and a leading + only.
  if (!looksLikePhoneNumber(to)) throw new BadRequest(badPhoneNumberMessage(to));
}

/** The message when no outbound route of the org takes `number` (exported for the transfer). */
export function noRouteMessage(number: string): string {
  return `No outbound route of the org matches ${number}`;
}

/**
 * Refuses a number the org's outbound context has no extension for, before the engine is asked:
 * the engine would refuse the Originate ("Extension does not exist") or fail the call unseen.
 */
function checkRouted(state: OrgState, to: string): void {
  if (!outboundEntryFor(state, to)) throw new BadRequest(noRouteMessage(to));
}

function callerIdFor(
  state: OrgState,
  callerId: string | undefined,
  user: User,
  requireDid: boolean,
): { number: string; source: CallerIdSource } {
  const resolved = resolveCallerId(state, { callerId, user, requireDid });
  if ("refused" in resolved) {
    if (resolved.refused === "caller_id_not_assigned") throw new Forbidden(resolved.refused);
    throw new BadRequest(resolved.refused);
  }
  return resolved;
}

interface Placement {
  channel: string;
  context: string;
  exten: string;
  /** The first leg's caller ID, given the resolved outbound number. */
  callerId: (number: string) => string;
  timeoutMs: number;
  user: User;
  resolved: { number: string; source: CallerIdSource };
  to: string;
}

async function place(deps: OriginationDeps, state: OrgState, p: Placement): Promise<PlacedCall> {
  if (!deps.control || !deps.connected()) {
    throw new Unavailable("The engine is not connected: calls cannot be placed now");
  }
  const id = randomUUID();
  const variables: Record<string, string> = {
    // The outbound route looks the caller up by bare extension (rules 2-5 and recording).
    CALLER_EXT: p.user.extension,
  };
  // Rule 1 only: without a request caller_id the route's own lookup decides, as for a phone.
  if (p.resolved.source === "request") variables[REQUEST_CALLER_ID_VARIABLE] = p.resolved.number;
  const linkedid = `pbx-${id}`;
  await deps.control.originate({
    channel: p.channel,
    context: p.context,
    exten: p.exten,
    callerId: p.callerId(p.resolved.number),
    account: state.org.id,
    channelId: linkedid,
    otherChannelId: `pbx-${id}-2`,
    timeoutMs: p.timeoutMs,
    variables,
  });
  return {
    success: true,
    linkedid,
    to: p.to,
    caller_id: p.resolved.number,
    caller_id_source: p.resolved.source,
  };
}
