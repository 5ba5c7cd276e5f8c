// Call listings (`/calls`, SPEC.md §4.5): the org's calls with live ones marked, the history
// (one call per linkedid), counts and a call's journey. Thin: src/domain/calls/calls.ts holds the
// rules; each route needs its `calls.*` permission for `ak_` keys and user roles.
import { type TSchema, Type } from "@sinclair/typebox";
import {
  hangupCall,
  holdCall,
  TRANSFER_TARGET,
  transferCall,
  unholdCall,
} from "../../domain/calls/call-control.js";
import { clickToCall, originateToAi } from "../../domain/calls/call-origination.js";
import { openCallRecording, RECORDING_NOT_FOUND } from "../../domain/calls/call-recordings.js";
import {
  CALL_FILTER_PATTERNS,
  callCounts,
  callHistory,
  callJourney,
  listOrgCalls,
} from "../../domain/calls/calls.js";
import { CALL_DIRECTIONS, CALL_DISPOSITIONS } from "../../model/call-outcomes.js";
import {
  CallViewSchema as Call,
  JourneyLegSchema as Leg,
  LiveCallViewSchema as LiveCall,
  LiveChannelViewSchema as LiveChannel,
  JourneyStepSchema as Step,
} from "../../model/call-views.js";
import { loadOrgState } from "../../store/load-org-state.js";
import { createOrganizationRepository } from "../../store/organization-repository.js";
import type { AppDeps } from "../deps.js";
import { rangedFileReply } from "../file-reply.js";
import { PageQuery, Pagination } from "../pagination.js";
import { orgCaller } from "../principals.js";
import { defineRoute } from "../registry.js";

const WavBody = Type.String({ format: "binary" });

const filterFields = {
  from: Type.Optional(
    Type.String({ format: "date-time", description: "calls that started at or after (ISO 8601)" }),
  ),
  to: Type.Optional(
    Type.String({ format: "date-time", description: "calls that started before (ISO 8601)" }),
  ),
  direction: Type.Optional(Type.Union(CALL_DIRECTIONS.map((d) => Type.Literal(d)))),
  disposition: Type.Optional(
    Type.Union(
      CALL_DISPOSITIONS.map((d) => Type.Literal(d)),
      { description: "the call's best outcome over its legs" },
    ),
  ),
  extension: Type.Optional(
    Type.String({
      pattern: CALL_FILTER_PATTERNS.extension.pattern,
      description: "a leg of the call has this extension as source or destination",
    }),
  ),
  number: Type.Optional(
    Type.String({
      pattern: CALL_FILTER_PATTERNS.number.pattern,
      description: "digits found in the call's source or destination",
    }),
  ),
};

/** The page query of every list (api/pagination.ts), beside the call filters. */
export const pageFields = PageQuery.properties;

/** A page of calls as SPEC.md §4.5 answers it: `{calls, total, pagination}`. */
export function callPage(item: TSchema) {
  return Type.Object({
    calls: Type.Array(item),
    total: Type.Integer(),
    pagination: Pagination,
  });
}

const callsDeps = (deps: AppDeps) => ({ db: deps.db, live: deps.liveCalls });

// An engine id (linkedid or uniqueid) as Asterisk writes it: no slash, so never a path.
const EngineId = Type.String({ pattern: "^[A-Za-z0-9_.-]{1,150}$" });
const LinkedIdParams = Type.Object({ linkedId: EngineId });

const originationDeps = (deps: AppDeps) => ({
  db: deps.db,
  clock: deps.clock,
  control: deps.callControl,
  connected: () => deps.liveCalls.tracking,
});

const transferDeps = (deps: AppDeps) => ({
  live: deps.liveCalls,
  control: deps.callControl,
  async contextPrefix(orgId: string) {
    const org = await createOrganizationRepository(deps.db).findById(orgId);
    if (!org) throw new Error(`org ${orgId} vanished`);
    return org.context_prefix;
  },
  orgState: (orgId: string) => loadOrgState(deps.db, orgId),
});

/** The 502 every call-control operation may answer (src/domain/calls/engine-refusals.ts). */
const ENGINE_REFUSED = {
  description:
    "`The engine refused <Action>: <the engine's message>`: Asterisk refused the action for a reason no other status describes",
};

/** The `Idempotency-Key` request header; an empty one counts as none. */
const idempotencyKey = (ctx: { get(name: string): string }) =>
  ctx.get("Idempotency-Key") || undefined;

const PhoneNumber = Type.String({
  maxLength: 16,
  description: "the number to dial: 7-15 digits, optional leading +",
});
const CallerIdField = Type.Optional(
  Type.String({
    maxLength: 32,
    description:
      "SPEC §4.5 rule 1: an assigned, active DID of the org (any spelling; sent as E.164), else 403 `caller_id_not_assigned`",
  }),
);

const PlacedCall = Type.Object(
  {
    success: Type.Literal(true),
    linkedid: Type.String({
      description: "the call's linkedid, as /calls and its journey show it",
    }),
    to: Type.String(),
    caller_id: Type.String({
      description: "what the outbound leg sends, after the gateway range check",
    }),
    caller_id_source: Type.String({
      description:
        "request, user_outbound_did, org_default_did, first_assigned_did or none (the sentinel)",
    }),
  },
  { title: "PlacedCall" },
);

const IDEMPOTENCY_TEXT =
  "Send an `Idempotency-Key` header (1-255 printable characters) to make a retry safe: the same key from the same org answers the first request's result and places no second call; 409 when the key is reused for a different request or its first request is still running. A key is kept 24 hours, then it may be used again.";

export const callRoutes = [
  defineRoute({
    method: "get",
    path: "/calls",
    tag: "Call Management",
    summary: "The org's calls, live calls first",
    description:
      "Calls in progress (marked `live: true`, newest first) followed by stored calls, one per linkedid, newest first. Filters as for `/calls/history`; they apply to stored calls.",
    auth: "org",
    permission: "calls.read",
    query: Type.Object({ ...filterFields, ...pageFields }, { additionalProperties: false }),
    responses: {
      200: {
        description: "one page of calls",
        schema: callPage(Type.Union([LiveCall, Call])),
      },
    },
    handler: ({ deps, principal, query }) =>
      listOrgCalls(callsDeps(deps), orgCaller(principal).orgId, query),
  }),
  defineRoute({
    method: "get",
    path: "/calls/history",
    tag: "Call Management",
    summary: "The org's call history, one record per call (linkedid)",
    auth: "org",
    permission: "calls.read",
    query: Type.Object({ ...filterFields, ...pageFields }, { additionalProperties: false }),
    responses: {
      200: {
        description: "one page of calls, newest first",
        schema: callPage(Call),
      },
    },
    handler: ({ deps, principal, query }) =>
      callHistory(callsDeps(deps), orgCaller(principal).orgId, query),
  }),
  defineRoute({
    method: "get",
    path: "/calls/count",
    tag: "Call Management",
    summary: "How many calls the org has, and how many are live",
    auth: "org",
    permission: "calls.read",
    query: Type.Object(filterFields, { additionalProperties: false }),
    responses: {
      200: {
        description: "counts (history filters apply to all but `active`)",
        schema: Type.Object({
          total: Type.Integer(),
          active: Type.Integer({ description: "calls in progress now" }),
          answered: Type.Integer(),
          missed: Type.Integer({ description: "calls no leg answered" }),
          inbound: Type.Integer(),
          outbound: Type.Integer(),
          internal: Type.Integer(),
          live_tracking: Type.Boolean({
            description:
              "false when the server follows no engine (PBX_ENGINE none) or is not connected: `active` is then 0",
          }),
        }),
      },
    },
    handler: ({ deps, principal, query }) =>
      callCounts(callsDeps(deps), orgCaller(principal).orgId, query),
  }),
  defineRoute({
    method: "get",
    path: "/calls/{linkedId}/journey",
    tag: "Call Management",
    summary: "Every step and leg of one call, in order",
    auth: "org",
    permission: "calls.read",
    params: LinkedIdParams,
    responses: {
      200: {
        description:
          "the call's events in the engine's time order, its records in the order the engine started them, and its live channels; only what rule 3 gives to the caller's org",
        schema: Type.Object({
          linkedid: Type.String(),
          live: Type.Boolean(),
          events: Type.Array(Step),
          legs: Type.Array(Leg),
          live_channels: Type.Array(LiveChannel),
        }),
      },
      404: { description: "`Call not found` (also for another org's call)" },
    },
    handler: ({ deps, principal, params }) =>
      callJourney(callsDeps(deps), orgCaller(principal).orgId, params.linkedId),
  }),
  defineRoute({
    method: "post",
    path: "/calls/{linkedId}/hangup",
    tag: "Call Management",
    summary: "Hang up a live call of the org",
    description:
      "Asks the engine to hang up every channel of the call that belongs to the caller's org (SPEC §1 rule 3). Another org's call answers 404 like an unknown one.",
    auth: "org",
    permission: "calls.hangup",
    params: LinkedIdParams,
    responses: {
      200: {
        description: "the channels the engine was asked to hang up",
        schema: Type.Object({ success: Type.Literal(true), channels: Type.Array(Type.String()) }),
      },
      404: { description: "`Call not found`: no live call of the org with this linkedid" },
      502: ENGINE_REFUSED,
      503: { description: "the server follows no engine, or it is not connected" },
    },
    handler: ({ deps, principal, params }) =>
      hangupCall(
        { live: deps.liveCalls, control: deps.callControl },
        orgCaller(principal).orgId,
        params.linkedId,
      ),
  }),
  defineRoute({
    method: "get",
    path: "/calls/{callId}/recording",
    tag: "Call Management",
    summary: "Download a call's recording (audio/wav, byte ranges supported)",
    description: `The recording MixMonitor made of the call (its linkedid) or of one leg (its uniqueid), looked up on the org's own call records (SPEC §1 rule 4): another org's call answers 404 \`${RECORDING_NOT_FOUND}\` like an unknown one, and so does a call that was not recorded or whose file is gone. A single \`Range: bytes=a-b\` is answered 206 with Content-Range.`,
    auth: "org",
    permission: "calls.recording",
    params: Type.Object({ callId: EngineId }),
    responses: {
      200: { description: "The whole file", contentType: "audio/wav", schema: WavBody },
      206: { description: "The requested range", contentType: "audio/wav", schema: WavBody },
      404: { description: `\`${RECORDING_NOT_FOUND}\`` },
      416: { description: "Range not satisfiable" },
    },
    handler: async ({ deps, principal, params, ctx }) =>
      rangedFileReply(
        await openCallRecording(
          {
            db: deps.db,
            recordingsDir: deps.config.recordingsDir,
            nodesDir: deps.config.nodesDir,
          },
          orgCaller(principal).orgId,
          params.callId,
        ),
        ctx.get("range") || undefined,
        "audio/wav",
      ),
  }),
  defineRoute({
    method: "post",
    path: "/calls/click-to-call",
    tag: "Call Management",
    summary: "Ring a user's extension, then dial a number out",
    description: `Rings the org's user \`from\` (its phone or mobile, for its ring time); once answered, dials \`to\` through the org's outbound routes with the caller ID of SPEC §4.5 rules 1-5 (\`caller_id\` when given, else the user's, the org's). Answers once the engine has queued the call. ${IDEMPOTENCY_TEXT}`,
    auth: "org",
    permission: "calls.click_to_call",
    body: Type.Object(
      {
        from: Type.String({
          pattern: "^[0-9]{2,15}$",
          description: "an active user extension of the org",
        }),
        to: PhoneNumber,
        caller_id: CallerIdField,
      },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: "the engine placed the call", schema: PlacedCall },
      400: {
        description:
          "`to` is not a phone number, `No outbound route of the org matches <to>`, or a bad Idempotency-Key",
      },
      403: { description: "`caller_id_not_assigned`, or the key lacks `calls.click_to_call`" },
      404: { description: "`from` is not an active user extension of the org" },
      409: {
        description:
          "the Idempotency-Key was used for another request, or is in progress; or `The engine refused Originate: Extension does not exist.` (the org's route is not loaded yet: its deploy is pending or failed)",
      },
      502: ENGINE_REFUSED,
      503: { description: "the server follows no engine, or it is not connected" },
    },
    handler: ({ deps, principal, body, ctx }) =>
      clickToCall(originationDeps(deps), orgCaller(principal).orgId, body, idempotencyKey(ctx)),
  }),
  defineRoute({
    method: "post",
    path: "/calls/originate-to-ai",
    tag: "Call Management",
    summary: "Dial a number out and connect it to the org's AI agent",
    description: `Dials \`to\` through the org's outbound routes; once answered, connects the org's first active \`ai_agent\` user (by extension). Caller ID by SPEC §4.5 rules 1-5 for that agent; with no \`caller_id\` and no assigned, active DID: 400 \`no_caller_id_available\` (rule 6). ${IDEMPOTENCY_TEXT}`,
    auth: "org",
    permission: "calls.originate_ai",
    body: Type.Object(
      { to: PhoneNumber, caller_id: CallerIdField },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: "the engine placed the call", schema: PlacedCall },
      400: {
        description:
          "`no_caller_id_available`, `to` is not a phone number, `No outbound route of the org matches <to>`, the org has no active ai_agent user, or a bad Idempotency-Key",
      },
      403: { description: "`caller_id_not_assigned`, or the key lacks `calls.originate_ai`" },
      409: {
        description:
          "the Idempotency-Key was used for another request, or is in progress; or `The engine refused Originate: Extension does not exist.` (the agent's extension is not loaded yet)",
      },
      502: ENGINE_REFUSED,
      503: { description: "the server follows no engine, or it is not connected" },
    },
    handler: ({ deps, principal, body, ctx }) =>
      originateToAi(originationDeps(deps), orgCaller(principal).orgId, body, idempotencyKey(ctx)),
  }),
  defineRoute({
    method: "post",
    path: "/calls/{linkedId}/transfer",
    tag: "Call Management",
    summary: "Blind-transfer a live call of the org",
    description:
      "Sends the party talking to the org's phone (or to `channel`, one of the org's channels of the call) to `to` through the org's internal context: an extension rings as an internal call, a number leaves through the org's outbound routes. The phone's leg is then hung up (AMI BlindTransfer). Another org's call answers 404 like an unknown one.",
    auth: "org",
    permission: "calls.transfer",
    params: LinkedIdParams,
    body: Type.Object(
      {
        to: Type.String({
          pattern: TRANSFER_TARGET,
          description: "an extension or a phone number",
        }),
        channel: Type.Optional(
          Type.String({
            maxLength: 200,
            description: "the org's channel of the call whose peer moves",
          }),
        ),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: {
        description: "the engine transferred the call",
        schema: Type.Object({
          success: Type.Literal(true),
          channel: Type.String(),
          to: Type.String(),
        }),
      },
      400: {
        description:
          "`to` is not an extension or a phone number, or `<to> is not an extension of the org and no outbound route of the org matches it`",
      },
      404: { description: "`Call not found` (also another org's), or `channel` is not in it" },
      409: {
        description:
          "the call has no answered phone of the org to transfer from, or `The engine refused BlindTransfer: Transfer not permitted` (`invalid`, `failed`): the channel is not in a state to transfer",
      },
      502: ENGINE_REFUSED,
      503: { description: "the server follows no engine, or it is not connected" },
    },
    handler: ({ deps, principal, params, body }) =>
      transferCall(transferDeps(deps), orgCaller(principal).orgId, params.linkedId, body),
  }),
  ...(["hold", "unhold"] as const).map((action) =>
    defineRoute({
      method: "post",
      path: `/calls/{linkedId}/${action}`,
      tag: "Call Management",
      summary:
        action === "hold"
          ? "Put a live call of the org on hold"
          : "Take a held call of the org off hold",
      description:
        action === "hold"
          ? "The party talking to the org's phone (or to `channel`, one of the org's channels of the call) leaves the bridge for the org's holding context, where it hears the org's music on hold (Asterisk's `default` class while the org has none); the phone's leg waits there in silence (AMI Redirect of both channels). Another org's call answers 404 like an unknown one."
          : "Bridges the org's leg that put the call on hold (or `channel`) with the party it holds again (AMI Bridge): the music stops and both hear each other. Another org's call answers 404 like an unknown one.",
      auth: "org",
      permission: "calls.hold",
      params: LinkedIdParams,
      body: Type.Object(
        {
          channel: Type.Optional(
            Type.String({
              maxLength: 200,
              description:
                action === "hold"
                  ? "the org's channel of the call whose peer is held"
                  : "the org's channel that put the call on hold",
            }),
          ),
        },
        { additionalProperties: false },
      ),
      responses: {
        200: {
          description:
            action === "hold" ? "the call is on hold" : "the two parties are bridged again",
          schema: Type.Object({
            success: Type.Literal(true),
            channel: Type.String({ description: "the org's leg that holds the call" }),
            held: Type.String({ description: "the party on hold (hearing music while held)" }),
          }),
        },
        404: { description: "`Call not found` (also another org's), or `channel` is not in it" },
        409: {
          description:
            action === "hold"
              ? "the call has no answered phone of the org, is not connected to exactly one other party, or is already on hold; or `The engine refused Redirect: <the engine's message>` (a channel not up)"
              : "the call is not on hold, or the held party has hung up",
        },
        502: ENGINE_REFUSED,
        503: { description: "the server follows no engine, or it is not connected" },
      },
      handler: ({ deps, principal, params, body }) =>
        (action === "hold" ? holdCall : unholdCall)(
          transferDeps(deps),
          orgCaller(principal).orgId,
          params.linkedId,
          body,
        ),
    }),
  ),
];
