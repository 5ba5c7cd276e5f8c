// Text to speech for editors (`/tts/*`, SPEC.md §4.4): the static voice catalogue and previews.
// A preview answers WAV bytes and writes nothing to disk.
import { Type } from "@sinclair/typebox";
import { listVoices, previewSpeech } from "../../domain/media/speech.js";
import { PREVIEW_MAX_CHARS, VoiceCatalogueSchema } from "../../tts/index.js";
import { defineRoute, reply } from "../registry.js";
import { Nullable } from "../schemas.js";

const PreviewBody = Type.Object(
  {
    text: Type.Optional(
      Nullable(Type.String({ description: `required, at most ${PREVIEW_MAX_CHARS} characters` })),
    ),
    language: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 40,
          description: "a language group of GET /tts/voices; default: the voice's, else en-IN",
        }),
      ),
    ),
    voice: Type.Optional(
      Nullable(Type.String({ maxLength: 60, description: "default: the language's default" })),
    ),
  },
  { additionalProperties: false, title: "TtsPreviewRequest" },
);

export const ttsRoutes = [
  defineRoute({
    method: "get",
    path: "/tts/voices",
    tag: "IVR",
    summary: "The voices for greetings: 11 language groups, each with its voices",
    auth: "org",
    list: "array",
    responses: {
      200: { description: "Static catalogue", schema: VoiceCatalogueSchema },
    },
    handler: () => listVoices(),
  }),

  defineRoute({
    method: "post",
    path: "/tts/preview",
    tag: "IVR",
    summary: "Speak a text as a WAV preview (8 kHz 16-bit mono); nothing is stored",
    description: `\`text is required\`; over ${PREVIEW_MAX_CHARS} characters answers 400 \`preview text must be ≤ ${PREVIEW_MAX_CHARS} characters\`.`,
    auth: "org",
    body: PreviewBody,
    responses: {
      200: {
        description: "RIFF/WAVE, PCM 16-bit, 8000 Hz, mono",
        contentType: "audio/wav",
        schema: Type.String({ format: "binary" }),
      },
    },
    handler: async ({ deps, body }) => {
      const wav = await previewSpeech(deps, body);
      return reply(200, Buffer.from(wav.buffer, wav.byteOffset, wav.byteLength), {
        "content-type": "audio/wav",
        "cache-control": "no-store",
      });
    },
  }),
];
