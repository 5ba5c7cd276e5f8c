// Greeting and music-on-hold files of an org (`/greetings`, `/music-on-hold`). Uploads are the
// raw WAV bytes as the request body (Content-Type audio/wav); any PCM, float, A-law or mu-law WAV
// is converted to 8 kHz 16-bit mono.
// Who: any org credential lists and downloads; uploads and deletes need `org.manage` (org key,
// org JWT, internal key, or a user JWT with the owner or admin role).
import { Type } from "@sinclair/typebox";
import type { Context } from "koa";
import {
  deleteMedia,
  listMedia,
  MAX_UPLOAD_BYTES,
  MEDIA_NAME_PATTERN,
  type MediaKind,
  readMedia,
  uploadMedia,
} from "../../domain/media/media.js";
import { MediaFileViewSchema } from "../../model/media-views.js";
import { orgCaller } from "../principals.js";
import { defineRoute, type RouteDefinition, reply } from "../registry.js";
import { assertIdentityEncoding } from "../request-body.js";
import type { TagName } from "../tags.js";

const WAV_TYPES = [
  "audio/wav",
  "audio/x-wav",
  "audio/wave",
  "audio/vnd.wave",
  "application/octet-stream",
];

const MediaName = Type.String({
  pattern: MEDIA_NAME_PATTERN,
  description: "lower-case letters, digits, '_' and '-', up to 64; no extension",
});

/** The request body as bytes, refusing non-WAV content types (415) and oversized bodies (413). */
async function readWavBody(ctx: Context): Promise<Uint8Array> {
  if (!ctx.is(WAV_TYPES)) {
    ctx.throw(415, "Unsupported media type");
  }
  assertIdentityEncoding(ctx);
  const declared = Number(ctx.get("content-length") || 0);
  if (declared > MAX_UPLOAD_BYTES) ctx.throw(413, "Request body too large");
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of ctx.req) {
    total += (chunk as Buffer).length;
    if (total > MAX_UPLOAD_BYTES) ctx.throw(413, "Request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** What else a change does: music-on-hold files are part of the org's configuration. */
const DEPLOYS: Record<MediaKind, string> = {
  greeting:
    " With engine nodes defined, an upload or a delete also deploys the org, which copies its greetings to its node (docs/nodes.md).",
  moh: " The org's music-on-hold class lists its files, so an upload or a delete deploys the org (about a second later); with no files left the org's queues and calls use the stock class.",
};

function mediaRoutes(kind: MediaKind, path: string, tag: TagName, what: string): RouteDefinition[] {
  const NameParams = Type.Object({ name: MediaName });
  return [
    defineRoute({
      method: "get",
      path,
      tag,
      summary: `List the org's ${what} files`,
      auth: "org",
      list: "envelope",
      responses: { 200: { description: "Files by name", schema: Type.Array(MediaFileViewSchema) } },
      handler: ({ deps, principal }) => listMedia(deps, kind, orgCaller(principal).orgId),
    }),

    defineRoute({
      method: "post",
      path,
      tag,
      summary: `Upload a ${what} file (raw WAV body)`,
      description: `Send the WAV file itself as the body with Content-Type audio/wav (at most ${MAX_UPLOAD_BYTES / 1024 / 1024} MB). It is stored as 8 kHz 16-bit mono PCM; an existing file of the same name is replaced. Without \`name\` the server chooses one.${DEPLOYS[kind]}`,
      auth: "org",
      permission: "org.manage",
      query: Type.Object({ name: Type.Optional(MediaName) }),
      upload: {
        contentTypes: WAV_TYPES,
        description: "the WAV file itself (PCM, float, A-law or mu-law; any rate and channels)",
      },
      responses: {
        201: { description: "The stored file", schema: MediaFileViewSchema },
        413: { description: "Body too large" },
        415: { description: "Not a WAV content type" },
      },
      handler: async ({ deps, query, principal, ctx }) => {
        const audio = await readWavBody(ctx);
        const input = query.name === undefined ? { audio } : { audio, name: query.name };
        return reply(201, await uploadMedia(deps, kind, orgCaller(principal).orgId, input));
      },
    }),

    defineRoute({
      method: "get",
      path: `${path}/{name}`,
      tag,
      summary: `Download one ${what} file`,
      auth: "org",
      params: NameParams,
      responses: {
        200: {
          description: "The WAV file (8 kHz, 16-bit, mono PCM)",
          contentType: "audio/wav",
          schema: Type.String({ format: "binary" }),
        },
      },
      handler: async ({ deps, params, principal }) => {
        const bytes = await readMedia(deps, kind, orgCaller(principal).orgId, params.name);
        return reply(200, bytes, { "content-type": "audio/wav" });
      },
    }),

    defineRoute({
      method: "delete",
      path: `${path}/{name}`,
      tag,
      summary: `Delete one ${what} file`,
      ...(DEPLOYS[kind] ? { description: DEPLOYS[kind].trim() } : {}),
      auth: "org",
      permission: "org.manage",
      params: NameParams,
      responses: { 204: { description: "Deleted" } },
      handler: async ({ deps, params, principal }) => {
        await deleteMedia(deps, kind, orgCaller(principal).orgId, params.name);
        return reply(204);
      },
    }),
  ];
}

export const mediaFileRoutes: readonly RouteDefinition[] = [
  ...mediaRoutes("greeting", "/greetings", "Greetings", "greeting"),
  ...mediaRoutes("moh", "/music-on-hold", "Music on Hold", "music-on-hold"),
];
