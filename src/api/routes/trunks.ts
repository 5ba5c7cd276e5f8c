// SIP trunks of an org (`/trunks`). The password is write-only: stored readable because PJSIP
// must present it to the carrier, never answered (only `has_password`).
// Who: any org credential reads; changes need `org.manage` (org key, org JWT, internal key, or a
// user JWT with the owner or admin role).
import { Type } from "@sinclair/typebox";
import {
  createTrunk,
  deleteTrunk,
  getTrunk,
  listTrunks,
  updateTrunk,
} from "../../domain/routing/trunks.js";
import { boundsOf, PRINTABLE_ASCII, Trunk } from "../../model/org-state.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { IdParams, modelField, Nullable, UuidString, updateBodyOf } from "../schemas.js";

const fields = Trunk.properties;

const TrunkSchema = Type.Object(
  {
    id: UuidString,
    name: Type.String(),
    host: Type.String(),
    port: Type.Integer(boundsOf(fields.port)),
    transport: fields.transport,
    username: Nullable(Type.String()),
    has_password: Type.Boolean({ description: "a password is stored (it is never returned)" }),
    registration: Type.Boolean(),
    codecs: Type.Array(Type.String()),
    match: Type.Array(Type.String()),
  },
  { title: "Trunk" },
);

const Password = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: PRINTABLE_ASCII,
  description: "write-only; printable ASCII without spaces",
});

const editable = {
  host: Type.String({ ...fields.host, description: "carrier host name or address" }),
  port: Type.Integer({ ...boundsOf(fields.port), description: "default 5060" }),
  transport: fields.transport,
  username: modelField(fields.username),
  password: Nullable(Password),
  registration: Type.Boolean({ description: "register to the carrier (needs a username)" }),
  codecs: modelField(fields.codecs, "default ulaw, alaw"),
  match: modelField(
    fields.match,
    "addresses or CIDR ranges identifying inbound traffic from the carrier",
  ),
};

const TrunkName = Type.String({
  ...fields.name,
  description: "lower-case letters, digits, '_' and '-', up to 32; unique in the org",
});

const TrunkCreate = Type.Object(
  {
    name: TrunkName,
    host: editable.host,
    port: Type.Optional(editable.port),
    transport: Type.Optional(editable.transport),
    username: Type.Optional(editable.username),
    password: Type.Optional(editable.password),
    registration: Type.Optional(editable.registration),
    codecs: Type.Optional(editable.codecs),
    match: Type.Optional(editable.match),
  },
  { additionalProperties: false },
);

const TrunkUpdate = updateBodyOf(TrunkCreate);

export const trunkRoutes = [
  defineRoute({
    method: "get",
    path: "/trunks",
    tag: "SIP Trunks",
    summary: "List the org's trunks",
    auth: "org",
    list: "envelope",
    responses: { 200: { description: "Trunks by name", schema: Type.Array(TrunkSchema) } },
    handler: ({ deps, principal }) => listTrunks(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/trunks",
    tag: "SIP Trunks",
    summary: "Create a trunk; schedules a deploy",
    auth: "org",
    permission: "org.manage",
    body: TrunkCreate,
    responses: {
      201: { description: "The trunk", schema: TrunkSchema },
      409: {
        description:
          "A trunk of that name exists, or `<address> is already matched by another organization's trunk` (its host or a `match` entry overlaps another org's trunk's)",
      },
    },
    handler: ({ deps, body, principal }) => createTrunk(deps, orgCaller(principal).orgId, body),
  }),

  defineRoute({
    method: "get",
    path: "/trunks/{id}",
    tag: "SIP Trunks",
    summary: "One trunk",
    auth: "org",
    params: IdParams,
    responses: { 200: { description: "The trunk", schema: TrunkSchema } },
    handler: ({ deps, params, principal }) => getTrunk(deps, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "put",
    path: "/trunks/{id}",
    tag: "SIP Trunks",
    summary: "Update a trunk (partial; an omitted password is kept, null removes it)",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    body: TrunkUpdate,
    responses: {
      200: { description: "The trunk", schema: TrunkSchema },
      409: {
        description:
          "Another trunk of the org has that name, or `<address> is already matched by another organization's trunk`",
      },
    },
    handler: ({ deps, params, body, principal }) =>
      updateTrunk(deps, orgCaller(principal).orgId, params.id, body),
  }),

  defineRoute({
    method: "delete",
    path: "/trunks/{id}",
    tag: "SIP Trunks",
    summary: "Delete a trunk no outbound route uses",
    auth: "org",
    permission: "org.manage",
    params: IdParams,
    responses: {
      204: { description: "Deleted" },
      409: { description: "An outbound route still uses the trunk (named in the message)" },
    },
    handler: async ({ deps, params, principal }) => {
      await deleteTrunk(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),
];
