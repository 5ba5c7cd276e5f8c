// What the API answers for calls (`/calls`, SPEC.md §4.5): a finished call, a live one, and a
// call's journey (its legs and engine steps), as response schemas and (as `Static<>`) the view
// types the call use cases return.
import { type Static, Type } from "@sinclair/typebox";
import { CALL_DIRECTIONS, CALL_DISPOSITIONS } from "./call-outcomes.js";
import { DateTime, Nullable } from "./view-shapes.js";

/** A finished call as listings show it: one per linkedid. */
export const CallViewSchema = Type.Object(
  {
    linkedid: Type.String({ description: "the call: every leg of it shares this id" }),
    uniqueid: Type.String({ description: "the first leg's channel id" }),
    calldate: DateTime,
    enddate: Nullable(DateTime),
    src: Type.String(),
    dst: Type.String(),
    channel: Type.String(),
    dstchannel: Type.String(),
    duration: Type.Integer({ description: "seconds, the longest leg" }),
    billsec: Type.Integer({ description: "answered seconds, the longest leg" }),
    disposition: Type.String({ description: CALL_DISPOSITIONS.join(", ") }),
    direction: Type.String({ description: CALL_DIRECTIONS.join(", ") }),
    recording_file: Nullable(
      Type.String({ description: "path under the engine's monitor directory" }),
    ),
    legs: Type.Integer({ description: "call records (legs) stored for the call" }),
    live: Type.Boolean({ description: "some channel of the call is still up" }),
  },
  { title: "Call" },
);
export type CallView = Static<typeof CallViewSchema>;

export const LiveChannelViewSchema = Type.Object({
  channel: Type.String(),
  uniqueid: Type.String(),
  state: Type.String({ description: "Asterisk's channel state: Down, Ring, Ringing, Up, Busy..." }),
  context: Type.String(),
  exten: Type.String(),
});

/** A call in progress, as the call list shows it. */
export const LiveCallViewSchema = Type.Object(
  {
    linkedid: Type.String(),
    uniqueid: Type.String(),
    calldate: DateTime,
    live: Type.Literal(true),
    status: Type.String({ description: "`Up` once a leg is answered, else the first leg's state" }),
    src: Type.String(),
    dst: Type.String(),
    channels: Type.Array(LiveChannelViewSchema),
  },
  { title: "LiveCall" },
);
export type LiveCallView = Static<typeof LiveCallViewSchema>;

/** One record (leg) of a call, without what only the store and rule 3 need. */
export const JourneyLegSchema = Type.Object(
  {
    uniqueid: Type.String(),
    sequence: Type.Integer(),
    calldate: DateTime,
    answerdate: Nullable(DateTime),
    enddate: Nullable(DateTime),
    src: Type.String(),
    dst: Type.String(),
    dcontext: Type.String(),
    channel: Type.String(),
    dstchannel: Type.String(),
    lastapp: Type.String(),
    lastdata: Type.String(),
    duration: Type.Integer(),
    billsec: Type.Integer(),
    disposition: Type.String(),
    direction: Type.String(),
    recording_file: Nullable(Type.String()),
  },
  { title: "CallLeg" },
);
export type JourneyLeg = Static<typeof JourneyLegSchema>;

/** One engine event of a call's journey. */
export const JourneyStepSchema = Type.Object(
  {
    at: DateTime,
    timestamp: Type.String({ description: "the engine's `<epoch>.<microseconds>`: exact order" }),
    event: Type.String({
      description:
        "Newchannel, Newstate, DialBegin, DialEnd, BridgeEnter, BridgeLeave, QueueCallerJoin, QueueCallerLeave, QueueCallerAbandon, AgentCalled, AgentConnect, AgentRingNoAnswer, AgentComplete, MusicOnHoldStart/Stop, MixMonitorStart/Stop, Hangup",
    }),
    uniqueid: Type.String(),
    channel: Type.String(),
    state: Type.String(),
    context: Type.String(),
    exten: Type.String(),
    // additionalProperties, not Type.Record: OpenAPI 3.0 has no patternProperties.
    // Unsafe only types it: the schema is the object below, a string per field.
    detail: Type.Unsafe<Record<string, string>>(
      Type.Object(
        {},
        {
          additionalProperties: Type.String(),
          description: "the event's own fields: destchannel, dialstatus, queue, cause...",
        },
      ),
    ),
  },
  { title: "CallStep" },
);
export type JourneyStep = Static<typeof JourneyStepSchema>;
