// Call queues of an org and their members (`/queues`, SPEC.md §4.3). Field schemas come from the
// model's `Queue`, so requests obey the same character rules as an org file.
import { Type } from "@sinclair/typebox";
import {
  addQueueMember,
  createQueue,
  deleteQueue,
  getQueue,
  listQueues,
  removeQueueMember,
  updateQueue,
  updateQueueMember,
} from "../../domain/routing/queues.js";
import { QueueMember as MemberModel, Queue as QueueModel } from "../../model/org-state.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { ErrorBody, IdParams, modelField, UuidString, updateBodyOf } from "../schemas.js";

const F = QueueModel.properties;
const M = MemberModel.properties;

const TIMEOUT_DOC =
  "With `timeout_destination`, written together: `none` (clears the destination; may come alone), `user` (a user's extension), `queue` (another queue's number), `phone` (7-15 digits). One without the other is a 400.";

const MemberBody = Type.Object(
  {
    extension: M.extension,
    penalty: Type.Optional(modelField(M.penalty)),
    ring_time: Type.Optional(modelField(M.ring_time)),
  },
  { additionalProperties: false, title: "QueueMemberCreate" },
);

const QueueCreate = Type.Object(
  {
    number: F.number,
    name: F.name,
    strategy: Type.Optional(modelField(F.strategy)),
    moh: Type.Optional(modelField(F.moh)),
    max_wait: Type.Optional(modelField(F.max_wait)),
    timeout_destination_type: Type.Optional(
      Type.Unsafe<"none" | "user" | "queue" | "phone">({
        ...modelField(F.timeout_destination_type),
        description: TIMEOUT_DOC,
      }),
    ),
    timeout_destination: Type.Optional(modelField(F.timeout_destination)),
    members: Type.Optional(Type.Array(MemberBody)),
  },
  { additionalProperties: false, title: "QueueCreate" },
);

const QueueUpdate = updateBodyOf(Type.Omit(QueueCreate, ["members"]), { title: "QueueUpdate" });

const MemberResponse = Type.Object(
  {
    extension: M.extension,
    penalty: modelField(M.penalty),
    ring_time: modelField(M.ring_time),
  },
  { title: "QueueMember" },
);

const QueueResponse = Type.Object(
  {
    id: UuidString,
    number: F.number,
    name: F.name,
    strategy: modelField(F.strategy),
    moh: modelField(F.moh),
    max_wait: modelField(F.max_wait),
    timeout_destination_type: modelField(F.timeout_destination_type),
    timeout_destination: modelField(F.timeout_destination),
    members: Type.Array(MemberResponse),
  },
  { title: "Queue" },
);

const MemberParams = Type.Object({ id: UuidString, extension: M.extension });

const MemberChange = updateBodyOf(Type.Omit(MemberBody, ["extension"]), {
  title: "QueueMemberChange",
});

const SAME_AS_BODY_FORM =
  "Same as the body form `/queues/{id}/members` of SPEC.md §4.3. 404 when the extension is not a member.";
const SAME_AS_PATH_FORM =
  "Same as `/queues/{id}/members/{extension}`. 404 when the extension is not a member.";

export const queueRoutes = [
  defineRoute({
    method: "get",
    path: "/queues",
    tag: "Queues",
    summary: "List the org's queues with their members, by number",
    auth: "org",
    list: "envelope",
    responses: { 200: { description: "Queues", schema: Type.Array(QueueResponse) } },
    handler: ({ deps, principal }) => listQueues(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/queues",
    tag: "Queues",
    summary: "Create a queue",
    description:
      "The number must be free in the org (users, queues and IVRs share one extension space): 409 otherwise.",
    auth: "org",
    permission: "org.manage",
    body: QueueCreate,
    responses: {
      201: { description: "The queue", schema: QueueResponse },
      409: { description: "Number already in use", schema: ErrorBody },
    },
    handler: async ({ deps, body, principal }) =>
      reply(201, await createQueue(deps, orgCaller(principal).orgId, body)),
  }),

  defineRoute({
    method: "get",
    path: "/queues/{id}",
    tag: "Queues",
    summary: "One queue with its members",
    auth: "org",
    params: IdParams,
    responses: { 200: { description: "The queue", schema: QueueResponse } },
    handler: ({ deps, params, principal }) => getQueue(deps, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "put",
    path: "/queues/{id}",
    tag: "Queues",
    summary: "Update a queue (partial), including the timeout destination pair",
    description:
      "Omitted fields keep their value. A changed number is re-checked for collisions (409). A change that would break a DID or another queue's timeout naming this queue is refused (400).",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: QueueUpdate,
    responses: {
      200: { description: "The updated queue", schema: QueueResponse },
      409: { description: "Number already in use", schema: ErrorBody },
    },
    handler: ({ deps, params, body, principal }) =>
      updateQueue(deps, orgCaller(principal).orgId, params.id, body),
  }),

  defineRoute({
    method: "delete",
    path: "/queues/{id}",
    tag: "Queues",
    summary: "Delete a queue and its members",
    description: "Refused (400) while a DID, an IVR option or another queue's timeout leads to it.",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, params, principal }) => {
      await deleteQueue(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),

  defineRoute({
    method: "post",
    path: "/queues/{id}/members",
    tag: "Queues",
    summary: "Add a user (by extension) to the queue",
    description: "409 when already a member; 400 when the org has no user with that extension.",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: MemberBody,
    responses: {
      201: { description: "The queue with its members", schema: QueueResponse },
      409: { description: "Already a member", schema: ErrorBody },
    },
    handler: async ({ deps, params, body, principal }) =>
      reply(201, await addQueueMember(deps, orgCaller(principal).orgId, params.id, body)),
  }),

  // SPEC.md §4.3 writes `PATCH, DELETE /queues/{id}/members` with the member in the body; the
  // `/members/{extension}` form names it in the path. Both run the same handlers.
  defineRoute({
    method: "patch",
    path: "/queues/{id}/members/{extension}",
    tag: "Queues",
    summary: "Change a member's penalty and/or ring time",
    description: `The member is named in the path. ${SAME_AS_BODY_FORM}`,
    auth: "org",
    permission: "org.manage",
    params: MemberParams,
    body: MemberChange,
    responses: { 200: { description: "The queue with its members", schema: QueueResponse } },
    handler: ({ deps, params, body, principal }) =>
      updateQueueMember(deps, orgCaller(principal).orgId, params.id, params.extension, body),
  }),

  defineRoute({
    method: "patch",
    path: "/queues/{id}/members",
    tag: "Queues",
    summary: "Change a member's penalty and/or ring time (member in the body)",
    description: `SPEC.md §4.3's form: \`extension\` in the body names the member. ${SAME_AS_PATH_FORM}`,
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: Type.Object(
      { extension: M.extension, ...MemberChange.properties },
      { additionalProperties: false, title: "QueueMemberChangeByBody" },
    ),
    responses: { 200: { description: "The queue with its members", schema: QueueResponse } },
    handler: ({ deps, params, body: { extension, ...change }, principal }) =>
      updateQueueMember(deps, orgCaller(principal).orgId, params.id, extension, change),
  }),

  defineRoute({
    method: "delete",
    path: "/queues/{id}/members/{extension}",
    tag: "Queues",
    summary: "Remove a member from the queue",
    description: `The member is named in the path. ${SAME_AS_BODY_FORM}`,
    auth: "org",
    permission: "org.manage",
    params: MemberParams,
    responses: { 204: { description: "Removed" } },
    handler: async ({ deps, params, principal }) => {
      await removeQueueMember(deps, orgCaller(principal).orgId, params.id, params.extension);
      return reply(204);
    },
  }),

  defineRoute({
    method: "delete",
    path: "/queues/{id}/members",
    tag: "Queues",
    summary: "Remove a member from the queue (member in the body)",
    description: `SPEC.md §4.3's form: \`{"extension": "<ext>"}\` in the body names the member. ${SAME_AS_PATH_FORM}`,
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: Type.Object({ extension: M.extension }, { additionalProperties: false }),
    responses: { 204: { description: "Removed" } },
    handler: async ({ deps, params, body, principal }) => {
      await removeQueueMember(deps, orgCaller(principal).orgId, params.id, body.extension);
      return reply(204);
    },
  }),
];
