// The static voice catalogue behind `GET /tts/voices`: the 11 language groups of SPEC.md §4.4,
// each with Google-style voice names (what the `google` engine passes through) and the eSpeak NG
// voice and variant the embedded engine speaks them with.
import { type Static, Type } from "@sinclair/typebox";
import { UnknownLanguageError, UnknownVoiceError } from "./errors.js";

export type VoiceGender = "female" | "male";

export interface Voice {
  /** Google Cloud TTS voice name, e.g. `hi-IN-Wavenet-A`. */
  name: string;
  gender: VoiceGender;
  /** eSpeak NG voice argument (`-v`): language voice plus `+variant`, e.g. `hi+f3`. */
  espeak: string;
}

export interface LanguageGroup {
  /** BCP 47 tag, e.g. `hi-IN`. */
  language: string;
  /** Human name, e.g. `Hindi (India)`. */
  name: string;
  /** The voice a request without `voice` gets. */
  defaultVoice: string;
  voices: Voice[];
  /** eSpeak NG language voice used for every voice of the group. */
  espeakVoice: string;
  /** Set when eSpeak NG has no voice for this exact language and a neighbour stands in. */
  espeakFallback?: string;
}

// eSpeak NG variants (espeak-ng-data/voices/!v) that change pitch and formants without the
// Klatt synthesizer, which this WASM build leaves out. Voices of one gender in a group get
// distinct variants so that two different voice names never sound identical.
const FEMALE_VARIANTS = ["f3", "f2", "f4", "f5"] as const;
const MALE_VARIANTS = ["", "m3", "m2", "m4", "m6", "m7"] as const;

type GenderCode = "F" | "M";

function group(
  language: string,
  name: string,
  espeakVoice: string,
  voices: Record<string, GenderCode>,
  options: { defaultVoice?: string; espeakFallback?: string } = {},
): LanguageGroup {
  let females = 0;
  let males = 0;
  const list = Object.entries(voices).map(([voiceName, code]): Voice => {
    const variant =
      code === "F"
        ? FEMALE_VARIANTS[females++ % FEMALE_VARIANTS.length]
        : MALE_VARIANTS[males++ % MALE_VARIANTS.length];
    return {
      name: voiceName,
      gender: code === "F" ? "female" : "male",
      espeak: variant ? `${espeakVoice}+${variant}` : espeakVoice,
    };
  });
  const first = list[0];
  if (!first) throw new Error(`voice catalogue: ${language} has no voices`);
  return {
    language,
    name,
    defaultVoice: options.defaultVoice ?? first.name,
    voices: list,
    espeakVoice,
    ...(options.espeakFallback ? { espeakFallback: options.espeakFallback } : {}),
  };
}

/** The 11 language groups, in SPEC.md order. Static: never changes at run time. */
export const VOICE_CATALOGUE: readonly LanguageGroup[] = Object.freeze([
  group(
    "en-IN",
    "English (India)",
    "en-gb",
    {
      "en-IN-Wavenet-A": "F",
      "en-IN-Wavenet-B": "M",
      "en-IN-Wavenet-C": "M",
      "en-IN-Wavenet-D": "F",
    },
    {
      // SPEC.md §2: the default greeting_voice.
      defaultVoice: "en-IN-Wavenet-D",
      espeakFallback:
        "eSpeak NG has no Indian English voice; British English (en-gb) is used instead",
    },
  ),
  group("en-US", "English (United States)", "en-us", {
    "en-US-Wavenet-A": "M",
    "en-US-Wavenet-B": "M",
    "en-US-Wavenet-C": "F",
    "en-US-Wavenet-D": "M",
    "en-US-Wavenet-E": "F",
    "en-US-Wavenet-F": "F",
  }),
  group("en-GB", "English (United Kingdom)", "en-gb", {
    "en-GB-Wavenet-A": "F",
    "en-GB-Wavenet-B": "M",
    "en-GB-Wavenet-C": "F",
    "en-GB-Wavenet-D": "M",
  }),
  group("hi-IN", "Hindi (India)", "hi", {
    "hi-IN-Wavenet-A": "F",
    "hi-IN-Wavenet-B": "M",
    "hi-IN-Wavenet-C": "M",
    "hi-IN-Wavenet-D": "F",
  }),
  group("ta-IN", "Tamil (India)", "ta", {
    "ta-IN-Wavenet-A": "F",
    "ta-IN-Wavenet-B": "M",
  }),
  // Google offers Telugu as Standard voices, not WaveNet.
  group("te-IN", "Telugu (India)", "te", {
    "te-IN-Standard-A": "F",
    "te-IN-Standard-B": "M",
  }),
  group("kn-IN", "Kannada (India)", "kn", {
    "kn-IN-Wavenet-A": "F",
    "kn-IN-Wavenet-B": "M",
  }),
  group("ml-IN", "Malayalam (India)", "ml", {
    "ml-IN-Wavenet-A": "F",
    "ml-IN-Wavenet-B": "M",
  }),
  group("mr-IN", "Marathi (India)", "mr", {
    "mr-IN-Wavenet-A": "F",
    "mr-IN-Wavenet-B": "M",
    "mr-IN-Wavenet-C": "F",
  }),
  group("gu-IN", "Gujarati (India)", "gu", {
    "gu-IN-Wavenet-A": "F",
    "gu-IN-Wavenet-B": "M",
  }),
  group("bn-IN", "Bengali (India)", "bn", {
    "bn-IN-Wavenet-A": "F",
    "bn-IN-Wavenet-B": "M",
  }),
]);

/** The default language of a greeting (SPEC.md §2). */
export const DEFAULT_LANGUAGE = "en-IN";

export interface ResolvedVoice {
  group: LanguageGroup;
  voice: Voice;
}

/**
 * Finds the language group and the voice (the group's default when `voice` is empty); throws
 * `UnknownLanguageError` / `UnknownVoiceError` with the valid choices in the message.
 */
export function resolveVoice(language: string, voice?: string | null): ResolvedVoice {
  const found = VOICE_CATALOGUE.find((g) => g.language.toLowerCase() === language.toLowerCase());
  if (!found) {
    throw new UnknownLanguageError(
      language,
      VOICE_CATALOGUE.map((g) => g.language),
    );
  }
  const wanted = voice || found.defaultVoice;
  const match = found.voices.find((v) => v.name.toLowerCase() === wanted.toLowerCase());
  if (!match) {
    throw new UnknownVoiceError(
      wanted,
      found.language,
      found.voices.map((v) => v.name),
    );
  }
  return { group: found, voice: match };
}

/** Schema of one entry of `GET /tts/voices` (for the API's validation and OpenAPI document). */
export const VoiceSchema = Type.Object({
  name: Type.String(),
  gender: Type.Union([Type.Literal("female"), Type.Literal("male")]),
  espeak: Type.String(),
});

/** Schema of the `GET /tts/voices` response body. */
export const VoiceCatalogueSchema = Type.Array(
  Type.Object({
    language: Type.String(),
    name: Type.String(),
    defaultVoice: Type.String(),
    voices: Type.Array(VoiceSchema, { minItems: 1 }),
    espeakVoice: Type.String(),
    espeakFallback: Type.Optional(Type.String()),
  }),
);

export type VoiceCatalogue = Static<typeof VoiceCatalogueSchema>;
