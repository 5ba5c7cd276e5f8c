// IVR menus of an org (`/ivrs`, SPEC.md §4.4): CRUD, the menu, publish, and the greeting
// (generate with text to speech, play back with byte ranges). Another org's IVR answers 404
// `IVR not found` on every route (SPEC.md §1 rule 2).
import { type TSchema, Type } from "@sinclair/typebox";
import {
  GREETING_BUSY,
  GREETING_NOT_GENERATED,
  generateIvrGreeting,
  openIvrGreeting,
} from "../../domain/media/speech.js";
import {
  createIvr,
  deleteIvr,
  getIvr,
  IVR_DEFAULTS,
  listIvrs,
  publishIvr,
  replaceIvrMenu,
  updateIvr,
} from "../../domain/routing/ivrs.js";
import { ACTION_TYPES, IVR_DIGITS, Ivr as IvrModel, ONE_LINE } from "../../model/org-state.js";
import { IvrMenuOptionViewSchema, IvrViewSchema } from "../../model/routing-views.js";
import { abortWhenClientLeaves } from "../client-gone.js";
import { rangedFileReply } from "../file-reply.js";
import { orgCaller } from "../principals.js";
import { defineRoute, reply } from "../registry.js";
import { ErrorBody, modelField, Nullable, Success, updateBodyOf } from "../schemas.js";

const TAG = "IVR" as const;

/** Any string: an unknown id (or another org's) is 404 `IVR not found`, never a 400. */
const IvrIdParams = Type.Object({
  id: Type.String({ maxLength: 64, description: "IVR id (UUID)" }),
});

function optionalNullable<T extends TSchema>(schema: T) {
  return Type.Optional(Nullable(schema));
}

// name and extension are optional in the schema so that a missing one gets SPEC.md §7's
// `name and extension required`; the domain holds the extension to 2-15 digits.
const ivrFields = {
  name: optionalNullable(
    Type.String({ maxLength: 100, pattern: ONE_LINE, description: "required on create" }),
  ),
  extension: optionalNullable(
    Type.String({
      maxLength: 15,
      pattern: "^[0-9]*$",
      description:
        "2-15 digits, required on create; unique in the org across IVRs, users and queue numbers",
    }),
  ),
  description: optionalNullable(modelField(IvrModel.properties.description)),
  timeout: optionalNullable(
    modelField(
      IvrModel.properties.timeout,
      `seconds to wait for a digit; ${IVR_DEFAULTS.timeout} when omitted or null; 0 is kept`,
    ),
  ),
  max_retries: optionalNullable(
    modelField(
      IvrModel.properties.max_retries,
      `${IVR_DEFAULTS.max_retries} when omitted or null; 0 is kept`,
    ),
  ),
  status: Type.Optional(
    modelField(
      IvrModel.properties.status,
      "only active IVRs are written to the dialplan; default active",
    ),
  ),
  greeting_language: optionalNullable(
    Type.String({
      maxLength: 40,
      pattern: "^[A-Za-z0-9-]*$",
      description: "one of the 11 groups of GET /tts/voices; default en-IN",
    }),
  ),
  greeting_voice: optionalNullable(
    Type.String({
      maxLength: 60,
      pattern: "^[A-Za-z0-9_-]*$",
      description: "a voice of greeting_language; default its default voice (en-IN-Wavenet-D)",
    }),
  ),
  direct_extension_dial: optionalNullable(
    modelField(
      IvrModel.properties.direct_extension_dial,
      "when on, dialling a 4-digit internal extension during the menu reaches it",
    ),
  ),
};

const IvrCreate = Type.Object(ivrFields, { additionalProperties: false, title: "IvrCreate" });
const IvrUpdate = updateBodyOf(IvrCreate, {
  title: "IvrUpdate",
  description: "Partial: an omitted field keeps its value; null timeout/max_retries reset them",
});

const MenuOptionInput = Type.Object(
  {
    // A digit sent as a number is read as its decimal text; a number beyond one digit is
    // answered `Invalid digit: <d>` like any other.
    digit: Type.Union(
      [
        Type.String({ maxLength: 8, pattern: ONE_LINE }),
        Type.Integer({ minimum: -99_999_999, maximum: 99_999_999 }),
      ],
      {
        description: `one of ${IVR_DIGITS.join(" ")}, one option per digit`,
      },
    ),
    action_type: Type.String({
      maxLength: 64,
      pattern: ONE_LINE,
      description: `one of ${ACTION_TYPES.join(", ")}`,
    }),
    action_destination: optionalNullable(
      Type.String({
        maxLength: 64,
        pattern: ONE_LINE,
        description:
          "required except for hangup: extension = a user's extension, queue = queue id (or number), ivr = another IVR's id, ai_agent = id of an ai_agent user, voicemail = mailbox digits, callback = phone number",
      }),
    ),
    description: optionalNullable(Type.String({ maxLength: 200, pattern: ONE_LINE })),
  },
  { additionalProperties: false, title: "IvrMenuOptionInput" },
);

const SpeechBody = Type.Object(
  {
    text: optionalNullable(Type.String({ description: "required; no length cap for greetings" })),
    language: optionalNullable(
      Type.String({ maxLength: 40, description: "default: the IVR's greeting_language" }),
    ),
    voice: optionalNullable(
      Type.String({ maxLength: 60, description: "default: the IVR's greeting_voice" }),
    ),
  },
  { additionalProperties: false, title: "GreetingRequest" },
);

const WavBody = Type.String({ format: "binary" });

export const ivrRoutes = [
  defineRoute({
    method: "get",
    path: "/ivrs",
    tag: TAG,
    summary: "List the org's IVRs, each with its menuOptions",
    auth: "org",
    list: "array",
    responses: { 200: { description: "IVRs by extension", schema: Type.Array(IvrViewSchema) } },
    handler: ({ deps, principal }) => listIvrs(deps, orgCaller(principal).orgId),
  }),

  defineRoute({
    method: "post",
    path: "/ivrs",
    tag: TAG,
    summary: "Create an IVR (name and extension required)",
    description:
      "Defaults: timeout 10, max_retries 3 (when omitted or null; 0 is stored as 0; negative values are refused), status active, greeting en-IN / en-IN-Wavenet-D. An extension held by a user, queue or IVR answers 409. Schedules the org's deploy.",
    auth: "org",
    permission: "org.manage",
    body: IvrCreate,
    responses: {
      201: { description: "The IVR", schema: IvrViewSchema },
      409: { description: "The extension is already used by an IVR, a user or a queue" },
    },
    handler: async ({ deps, body, principal }) =>
      reply(201, await createIvr(deps, orgCaller(principal).orgId, body)),
  }),

  defineRoute({
    method: "get",
    path: "/ivrs/{id}",
    tag: TAG,
    summary: "One IVR with its menuOptions",
    auth: "org",
    params: IvrIdParams,
    responses: { 200: { description: "The IVR", schema: IvrViewSchema } },
    handler: ({ deps, params, principal }) => getIvr(deps, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "put",
    path: "/ivrs/{id}",
    tag: TAG,
    summary: "Update an IVR (partial); a changed extension is re-checked for collisions",
    auth: "org",
    permission: "org.manage",
    params: IvrIdParams,
    body: IvrUpdate,
    responses: {
      200: { description: "The updated IVR", schema: IvrViewSchema },
      409: { description: "The extension is already used by an IVR, a user or a queue" },
    },
    handler: ({ deps, params, body, principal }) =>
      updateIvr(deps, orgCaller(principal).orgId, params.id, body),
  }),

  defineRoute({
    method: "delete",
    path: "/ivrs/{id}",
    tag: TAG,
    summary: "Delete an IVR, its menu options and its greeting file",
    description:
      "Frees its extension. Refused (400) while a DID or another IVR's option leads to it.",
    auth: "org",
    permission: "org.manage",
    params: IvrIdParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ deps, params, principal }) => {
      await deleteIvr(deps, orgCaller(principal).orgId, params.id);
      return reply(204);
    },
  }),

  defineRoute({
    method: "put",
    path: "/ivrs/{id}/menu",
    tag: TAG,
    summary: "Replace all menu options at once",
    description:
      "At most 12 options, one per digit (0-9, *, #). Every destination must exist in the org. The answer lists the new options in the order given.",
    auth: "org",
    permission: "org.manage",
    params: IvrIdParams,
    body: Type.Object(
      { options: Type.Array(MenuOptionInput) },
      { additionalProperties: false, title: "IvrMenu" },
    ),
    responses: {
      200: {
        description: "The new options",
        schema: Type.Object({ options: Type.Array(IvrMenuOptionViewSchema) }),
      },
    },
    handler: async ({ deps, params, body, principal }) => ({
      options: await replaceIvrMenu(deps, orgCaller(principal).orgId, params.id, body.options),
    }),
  }),

  defineRoute({
    method: "post",
    path: "/ivrs/{id}/publish",
    tag: TAG,
    summary: "Publish: regenerate and reload the org's whole configuration",
    description: "Answers at once; the deploy runs in the background.",
    auth: "org",
    permission: "org.manage",
    params: IvrIdParams,
    responses: { 200: { description: "Deploy scheduled", schema: Success } },
    handler: ({ deps, params, principal }) =>
      publishIvr(deps, orgCaller(principal).orgId, params.id),
  }),

  defineRoute({
    method: "post",
    path: "/ivrs/{id}/generate-greeting",
    tag: TAG,
    summary: "Generate the IVR's greeting with text to speech",
    description:
      "Writes `greeting_ivr_<id>.wav` (8 kHz 16-bit mono) in the greetings sound directory, replacing any previous one, and sets greeting_prompt, greeting_language and greeting_voice. No length cap on text unless the operator sets PBX_GREETING_MAX_CHARS. One synthesis per org at a time (429 while one runs); synthesis stops when the client disconnects. Schedules the org's deploy.",
    auth: "org",
    permission: "org.manage",
    params: IvrIdParams,
    body: SpeechBody,
    responses: {
      200: {
        description: "The greeting",
        schema: Type.Object({
          success: Type.Literal(true),
          greeting_prompt: Type.String(),
          greeting_language: Type.String(),
          greeting_voice: Type.String(),
        }),
      },
      429: { description: GREETING_BUSY, schema: ErrorBody },
    },
    handler: ({ deps, params, body, principal, ctx }) =>
      generateIvrGreeting(
        deps,
        orgCaller(principal).orgId,
        params.id,
        body,
        abortWhenClientLeaves(ctx),
      ),
  }),

  defineRoute({
    method: "get",
    path: "/ivrs/{id}/greeting-audio",
    tag: TAG,
    summary: "Play the IVR's greeting (audio/wav, byte ranges supported)",
    description: `404 \`IVR not found\` for an unknown or another org's IVR, 404 \`${GREETING_NOT_GENERATED}\` before the first generate-greeting. A single \`Range: bytes=a-b\` is answered 206 with Content-Range.`,
    auth: "org",
    params: IvrIdParams,
    responses: {
      200: { description: "The whole file", contentType: "audio/wav", schema: WavBody },
      206: { description: "The requested range", contentType: "audio/wav", schema: WavBody },
      416: { description: "Range not satisfiable" },
    },
    handler: async ({ deps, params, principal, ctx }) =>
      rangedFileReply(
        await openIvrGreeting(deps, orgCaller(principal).orgId, params.id),
        ctx.get("range") || undefined,
        "audio/wav",
      ),
  }),
];
