// SIP users (extensions) of an org (`/users`, SPEC.md §4.3). Field schemas come from the model's
// `User`, so requests obey the same character rules as an org file.
import { Type } from "@sinclair/typebox";
import {
  BatchRejected,
  type BatchRow,
  botExtensions,
  createUser,
  createUsersBatch,
  deleteUser,
  getUser,
  listUsers,
  regenerateSipPassword,
  type UserInput,
  updateUser,
} from "../../domain/users/users.js";
import { PRINTABLE_ASCII, User as UserModel } from "../../model/org-state.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { ErrorBody, IdParams, modelField, UuidString, updateBodyOf } from "../schemas.js";
import { describeValidationErrors, validatorOnFirstUse } from "../validation.js";

const F = UserModel.properties;

const SipPassword = Type.String({
  minLength: 8,
  maxLength: 128,
  pattern: PRINTABLE_ASCII,
  description: "printable ASCII without spaces, 8-128 characters; generated when omitted",
});

const UserCreate = Type.Object(
  {
    extension: F.extension,
    name: F.name,
    routing_type: Type.Optional(F.routing_type),
    status: Type.Optional(F.status),
    ring_target: Type.Optional(F.ring_target),
    phone_number: Type.Optional(F.phone_number),
    ring_time: Type.Optional(F.ring_time),
    outbound_did: Type.Optional(
      Type.Unsafe<string | null>({
        ...F.outbound_did,
        description: "an assigned, active DID of the org, or null",
      }),
    ),
    call_recording: Type.Optional(F.call_recording),
    sip_password: Type.Optional(SipPassword),
  },
  { additionalProperties: false, title: "UserCreate" },
);

const UserUpdate = updateBodyOf(UserCreate, { title: "UserUpdate" });
UserUpdate.properties.extension = Type.Optional(
  modelField(
    F.extension,
    "a new extension changes the SIP username, so the user gets a new SIP password: `sip_password` if given, else a generated one returned once in the answer",
  ),
);

const UserResponse = Type.Object(
  {
    id: UuidString,
    extension: modelField(F.extension),
    name: F.name,
    routing_type: modelField(F.routing_type),
    status: modelField(F.status),
    ring_target: modelField(F.ring_target),
    phone_number: modelField(F.phone_number),
    ring_time: modelField(F.ring_time),
    outbound_did: modelField(F.outbound_did),
    call_recording: modelField(F.call_recording),
    sip_username: Type.String({ description: "SIP auth username: `<context_prefix><extension>`" }),
  },
  { title: "User" },
);

const OncePassword = Type.String({
  description: "the SIP password; shown this once, stored only as an MD5 digest",
});

const UserWithPassword = Type.Composite(
  [UserResponse, Type.Object({ sip_password: OncePassword })],
  {
    title: "UserWithSipPassword",
  },
);

const UserUpdated = Type.Composite(
  [
    UserResponse,
    Type.Object({
      sip_password: Type.Optional(
        Type.String({ description: "present only when the extension changed: the new password" }),
      ),
    }),
  ],
  { title: "UserUpdated" },
);

// Batch rows are checked one by one (not by the route's body schema) so that every bad row can
// be reported, not only the first.
const checkRow = validatorOnFirstUse(UserCreate, "body");

function batchRow(row: unknown): BatchRow {
  if (checkRow(row)) return { input: row as UserInput };
  return { problem: describeValidationErrors(checkRow.errors, "row") };
}

export const userRoutes = [
  defineRoute({
    method: "get",
    path: "/users",
    tag: "Users",
    summary: "List the org's SIP users, by extension",
    auth: "org",
    list: "envelope",
    responses: { 200: { description: "Users", schema: Type.Array(UserResponse) } },
    handler: ({ deps, principal }) => listUsers(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/users",
    tag: "Users",
    summary: "Create a SIP user; its SIP password is in this answer only",
    description:
      "The extension must be free in the org (users, queues and IVRs share one extension space): 409 otherwise. `outbound_did` must be an assigned, active DID of the org. The SIP password is generated when omitted; it is stored only as an MD5 digest and never shown again.",
    auth: "org",
    permission: "org.manage",
    body: UserCreate,
    responses: {
      201: { description: "The user with its SIP password", schema: UserWithPassword },
      409: { description: "Extension already in use", schema: ErrorBody },
    },
    handler: ({ deps, body, principal }) => createUser(deps, orgCaller(principal).orgId, body),
  }),

  defineRoute({
    method: "post",
    path: "/users/batch",
    tag: "Users",
    summary: "Create many SIP users at once: all or nothing, one deploy",
    description:
      "Every row (same fields as `POST /users`) is validated first. If any row is bad, nothing is created and the 400 answer lists every bad row by index (`errors`). Otherwise all rows are created in one transaction and one deploy is scheduled; each created user carries its SIP password, shown this once.",
    auth: "org",
    permission: "org.manage",
    body: Type.Object(
      {
        users: Type.Array(Type.Unknown({ description: "a user, as the body of POST /users" }), {
          minItems: 1,
          maxItems: 1000,
        }),
      },
      { additionalProperties: false },
    ),
    responses: {
      201: {
        description: "The created users, in request order",
        schema: Type.Object({ users: Type.Array(UserWithPassword) }),
      },
      400: {
        description: "Nothing created; every bad row by index",
        schema: Type.Object({
          error: Type.String(),
          errors: Type.Optional(
            Type.Array(Type.Object({ index: Type.Integer(), error: Type.String() }), {
              description: "with a rejected batch: every bad row by index",
            }),
          ),
        }),
      },
    },
    handler: async ({ deps, body, principal }) => {
      try {
        const users = await createUsersBatch(
          deps,
          orgCaller(principal).orgId,
          body.users.map(batchRow),
        );
        return reply(201, { users });
      } catch (error) {
        if (error instanceof BatchRejected) {
          return reply(400, { error: error.message, errors: error.rows });
        }
        throw error;
      }
    },
  }),

  defineRoute({
    method: "post",
    path: "/users/internal/bot-extensions",
    tag: "Users",
    summary: "Extensions of an org's active ai_agent users (internal key)",
    description: "For the ticket intake: header `X-Internal-Key`, body `{org_id}`.",
    auth: "internal",
    body: Type.Object({ org_id: UuidString }, { additionalProperties: false }),
    responses: {
      200: {
        description: "Extensions, ascending",
        schema: Type.Object({ extensions: Type.Array(Type.String()) }),
      },
      404: { description: "No such organization" },
    },
    handler: ({ deps, body }) => botExtensions(deps, body.org_id),
  }),

  defineRoute({
    method: "get",
    path: "/users/{id}",
    tag: "Users",
    summary: "One SIP user",
    auth: "org",
    params: IdParams,
    responses: { 200: { description: "The user", schema: UserResponse } },
    handler: ({ deps, params, principal }) => getUser(deps, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "put",
    path: "/users/{id}",
    tag: "Users",
    summary: "Update a SIP user (partial: omitted fields keep their value)",
    description:
      "A changed extension is re-checked for collisions (409), follows into the org's queues, and changes the SIP username: the user gets a new SIP password (`sip_password` if given, else a generated one returned once in this answer). `outbound_did` must be an assigned, active DID of the org. A change that would break an IVR option or DID routing naming the user is refused (400).",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: UserUpdate,
    responses: {
      200: { description: "The updated user", schema: UserUpdated },
      409: { description: "Extension already in use", schema: ErrorBody },
    },
    handler: ({ deps, params, body, principal }) =>
      updateUser(deps, orgCaller(principal).orgId, params.id, body),
  }),

  defineRoute({
    method: "delete",
    path: "/users/{id}",
    tag: "Users",
    summary: "Delete a SIP user: endpoint and dialplan entries go with the next deploy",
    description:
      "Its queue memberships go too and its extension becomes free. Refused (400) while an IVR option, a DID or a queue timeout still leads to the user. Past call records stay.",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, params, principal }) => {
      await deleteUser(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),

  defineRoute({
    method: "post",
    path: "/users/{id}/sip-password",
    tag: "Users",
    summary: "Replace a user's SIP password with a new random one, shown once",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: {
      200: { description: "The user with its new SIP password", schema: UserWithPassword },
    },
    handler: ({ deps, params, principal }) =>
      regenerateSipPassword(deps, orgCaller(principal).orgId, params.id),
  }),
];
