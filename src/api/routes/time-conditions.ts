// Time conditions of an org (`/time-conditions`, issue 27 item 6): business-hours schedules
// that DIDs, IVR options and queue timeouts route to with the type `time_condition`. Field
// schemas come from the model's `TimeCondition`, so requests obey the same rules as an org file.
// Who: any org credential reads; changes need `org.manage`, as for queues and IVRs.
import { Type } from "@sinclair/typebox";
import {
  createTimeCondition,
  deleteTimeCondition,
  getTimeCondition,
  listTimeConditions,
  updateTimeCondition,
} from "../../domain/routing/time-conditions.js";
import { TimeCondition } from "../../model/org-state.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, modelField, UuidString, updateBodyOf } from "../schemas.js";

const F = TimeCondition.properties;

const DESTINATION_DOC =
  "`extension` (a user's extension), `queue` (a queue's number or id), `ivr` (an IVR's extension or id), `voicemail` (a mailbox: digits), `external` (a phone number) or `hangup` (no destination)";

const TimeConditionCreate = Type.Object(
  {
    name: modelField(
      F.name,
      "lower-case letters, digits, '_' and '-', up to 28; unique in the org; what DIDs, IVR options and queue timeouts name",
    ),
    description: Type.Optional(modelField(F.description)),
    time_zone: modelField(
      F.time_zone,
      "IANA time zone name the ranges and dates are read in, such as Europe/London or Asia/Kolkata",
    ),
    ranges: Type.Optional(
      modelField(F.ranges, "weekly open hours; none: never open. Replaced whole on update"),
    ),
    exceptions: Type.Optional(
      modelField(
        F.exceptions,
        "dated days (holidays), checked before the ranges: closed, or a destination of their own. Replaced whole on update",
      ),
    ),
    open_destination_type: modelField(F.open_destination_type, `while open: ${DESTINATION_DOC}`),
    open_destination: Type.Optional(modelField(F.open_destination)),
    closed_destination_type: modelField(
      F.closed_destination_type,
      `while closed: ${DESTINATION_DOC}`,
    ),
    closed_destination: Type.Optional(modelField(F.closed_destination)),
  },
  { additionalProperties: false, title: "TimeConditionCreate" },
);

const TimeConditionUpdate = updateBodyOf(TimeConditionCreate, { title: "TimeConditionUpdate" });

const TimeConditionResponse = Type.Object(
  {
    id: UuidString,
    name: modelField(F.name),
    description: modelField(F.description),
    time_zone: modelField(F.time_zone),
    ranges: modelField(F.ranges),
    exceptions: modelField(F.exceptions),
    open_destination_type: modelField(F.open_destination_type),
    open_destination: modelField(F.open_destination),
    closed_destination_type: modelField(F.closed_destination_type),
    closed_destination: modelField(F.closed_destination),
  },
  { title: "TimeCondition" },
);

const TAG = "Time Conditions";

export const timeConditionRoutes = [
  defineRoute({
    method: "get",
    path: "/time-conditions",
    tag: TAG,
    summary: "List the org's time conditions",
    auth: "org",
    list: "envelope",
    responses: {
      200: { description: "Time conditions by name", schema: Type.Array(TimeConditionResponse) },
    },
    handler: ({ deps, principal }) => listTimeConditions(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/time-conditions",
    tag: TAG,
    summary: "Create a time condition; schedules a deploy",
    auth: "org",
    permission: "org.manage",
    body: TimeConditionCreate,
    responses: {
      201: { description: "The time condition", schema: TimeConditionResponse },
      409: { description: "`Time condition '<name>' already exists`" },
    },
    handler: ({ deps, body, principal }) =>
      createTimeCondition(deps, orgCaller(principal).orgId, body),
  }),

  defineRoute({
    method: "get",
    path: "/time-conditions/{id}",
    tag: TAG,
    summary: "One time condition",
    auth: "org",
    params: IdParams,
    responses: { 200: { description: "The time condition", schema: TimeConditionResponse } },
    handler: ({ deps, params, principal }) =>
      getTimeCondition(deps, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "put",
    path: "/time-conditions/{id}",
    tag: TAG,
    summary: "Update a time condition (partial; ranges and exceptions are replaced whole)",
    description:
      "A rename is refused with 400 while a DID, IVR option or queue timeout still names the old name.",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: TimeConditionUpdate,
    responses: {
      200: { description: "The time condition", schema: TimeConditionResponse },
      409: { description: "`Time condition '<name>' already exists`" },
    },
    handler: ({ deps, params, body, principal }) =>
      updateTimeCondition(deps, orgCaller(principal).orgId, params.id, body),
  }),

  defineRoute({
    method: "delete",
    path: "/time-conditions/{id}",
    tag: TAG,
    summary: "Delete a time condition nothing routes to",
    description:
      "Refused with 400 `Cannot delete time condition '<name>': it is still used by ...` while a DID, IVR option or queue timeout routes to it.",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, params, principal }) => {
      await deleteTimeCondition(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),
];
