// What the API and the CLI call: long-text synthesis, previews and greetings, all ending as
// 8 kHz 16-bit mono WAV bytes.
import { DEFAULT_CHUNK_CHARS, splitIntoChunks } from "./chunk-text.js";
import type { PcmAudio, SpeechEngine } from "./engine.js";
import { PreviewTextTooLongError, TextRequiredError } from "./errors.js";
import { resample, TELEPHONY_SAMPLE_RATE } from "./resample.js";
import { DEFAULT_LANGUAGE, resolveVoice, VOICE_CATALOGUE } from "./voices.js";
import { encodeWav } from "./wav.js";

/** SPEC.md §8: preview text limit, in characters. */
export const PREVIEW_MAX_CHARS = 500;

/** The body of `POST /tts/preview` and `POST /ivrs/{id}/generate-greeting`. */
export interface SpeechRequest {
  text?: string | null;
  language?: string | null;
  voice?: string | null;
}

export interface SynthesizeOptions {
  /** Largest chunk handed to the engine at once (default 400 characters). */
  maxChunkChars?: number;
  /** Stops before the next chunk once aborted (the client went away): rejects with its reason. */
  signal?: AbortSignal;
}

/**
 * Speaks text of any length: checks language and voice first, splits the text at sentence and
 * clause ends, synthesizes the chunks in order (off this thread when `engine` is the worker
 * engine) and joins them as one 8 kHz track.
 */
export async function synthesizeLong(
  engine: SpeechEngine,
  text: string,
  language: string,
  voice?: string | null,
  options: SynthesizeOptions = {},
): Promise<PcmAudio> {
  const { group, voice: resolved } = resolveVoice(language, voice);
  const chunks = splitIntoChunks(text, options.maxChunkChars ?? DEFAULT_CHUNK_CHARS);
  if (chunks.length === 0) throw new TextRequiredError();
  const parts: Int16Array[] = [];
  for (const chunk of chunks) {
    options.signal?.throwIfAborted();
    const audio = await engine.synthesize(chunk, group.language, resolved.name);
    parts.push(resample(audio, TELEPHONY_SAMPLE_RATE).pcm);
  }
  return { pcm: concat(parts), sampleRate: TELEPHONY_SAMPLE_RATE };
}

/** `synthesizeLong` as WAV bytes (RIFF, PCM 16-bit, 8 kHz, mono). */
export async function synthesizeWav(
  engine: SpeechEngine,
  text: string,
  language: string,
  voice?: string | null,
  options?: SynthesizeOptions,
): Promise<Uint8Array> {
  const audio = await synthesizeLong(engine, text, language, voice, options);
  return encodeWav(audio.pcm, audio.sampleRate);
}

/**
 * The WAV of `POST /tts/preview`: `text is required`, at most 500 characters, language defaults
 * to the voice's group, else en-IN. Returns bytes only; writes nothing anywhere.
 */
export async function previewWav(
  engine: SpeechEngine,
  request: SpeechRequest,
): Promise<Uint8Array> {
  const text = requireText(request.text);
  if ([...text].length > PREVIEW_MAX_CHARS) throw new PreviewTextTooLongError(PREVIEW_MAX_CHARS);
  return synthesizeWav(engine, text, languageOf(request), request.voice);
}

/**
 * The WAV of `POST /ivrs/{id}/generate-greeting`: `text is required`, no length cap. Returns
 * the bytes for `writeGreeting`, plus the language and voice actually used (to store on the IVR).
 */
export async function greetingWav(
  engine: SpeechEngine,
  request: SpeechRequest,
  options: SynthesizeOptions = {},
): Promise<{ wav: Uint8Array; language: string; voice: string }> {
  const text = requireText(request.text);
  const { group, voice } = resolveVoice(languageOf(request), request.voice);
  const wav = await synthesizeWav(engine, text, group.language, voice.name, options);
  return { wav, language: group.language, voice: voice.name };
}

function requireText(text: string | null | undefined): string {
  if (typeof text !== "string" || text.trim() === "") throw new TextRequiredError();
  return text;
}

// No language: the group of the requested voice if it names one, else SPEC.md's default.
function languageOf(request: SpeechRequest): string {
  if (request.language) return request.language;
  const voice = request.voice?.toLowerCase();
  const owner =
    voice && VOICE_CATALOGUE.find((g) => g.voices.some((v) => v.name.toLowerCase() === voice));
  return owner ? owner.language : DEFAULT_LANGUAGE;
}

function concat(parts: Int16Array[]): Int16Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
