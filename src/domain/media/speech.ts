// Speech use cases of the API (SPEC.md §4.4): the voice catalogue, previews (bytes only, nothing
// on disk), IVR greeting generation (an atomic file write plus the IVR's greeting fields) and
// greeting playback. The speech layer (`src/tts`) does the synthesis; this module adds tenant
// checks, the sounds directory and the mapping of its errors: `TtsInputError` is the caller's
// fault (400 with its message), anything else stays a 500.
import { createIvrRepository } from "../../store/ivr-repository.js";
import {
  createSpeechEngine,
  greetingPath,
  greetingPrompt,
  greetingWav,
  previewWav,
  removeGreeting,
  resolveVoice,
  type SpeechEngine,
  type SpeechRequest,
  TtsInputError,
  VOICE_CATALOGUE,
  type VoiceCatalogue,
  writeGreeting,
} from "../../tts/index.js";
import { changeOrgConfig } from "../config/config-change.js";
import type { DomainDeps } from "../deps.js";
import { BadRequest, NotFound, TooManyRequests } from "../errors.js";
import { openSizedFile, type SizedFile } from "../open-file.js";
import { ownIvrRecord } from "../routing/ivr-access.js";

/** 404 of `GET /ivrs/{id}/greeting-audio` for an own IVR whose greeting was never generated. */
export const GREETING_NOT_GENERATED = "Greeting not generated yet";

let fallbackEngine: SpeechEngine | undefined;

/** The app's speech engine; without one (a caller that wired none), the configured default. */
export function speechEngineOf(deps: DomainDeps): SpeechEngine {
  if (deps.speechEngine) return deps.speechEngine;
  fallbackEngine ??= createSpeechEngine();
  return fallbackEngine;
}

/** Runs `work`, turning the speech layer's input errors into 400s with their message. */
async function asBadRequest<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TtsInputError) throw new BadRequest(error.message);
    throw error;
  }
}

function languageOfVoice(voice: string): string | undefined {
  const wanted = voice.toLowerCase();
  return VOICE_CATALOGUE.find((g) => g.voices.some((v) => v.name.toLowerCase() === wanted))
    ?.language;
}

/**
 * The catalogue spelling of a greeting language and voice (SPEC.md §2 defaults: en-IN and its
 * default voice en-IN-Wavenet-D). Without a language, the voice's own; without a voice, the
 * language's default. With `voiceMayChange`, a voice that does not belong to the language gives
 * way to the language's default instead of being refused (a language-only update).
 */
export function checkedGreetingVoice(
  language: string | null | undefined,
  voice: string | null | undefined,
  voiceMayChange = false,
): { language: string; voice: string } {
  const lang = language || (voice ? languageOfVoice(voice) : undefined) || "en-IN";
  try {
    const resolved = resolveVoice(lang, voice);
    return { language: resolved.group.language, voice: resolved.voice.name };
  } catch (error) {
    if (!(error instanceof TtsInputError)) throw error;
    if (voiceMayChange && voice) return checkedGreetingVoice(lang, null);
    throw new BadRequest(error.message);
  }
}

/** The static catalogue of `GET /tts/voices`: 11 language groups, each with its voices. */
export function listVoices(): VoiceCatalogue {
  return VOICE_CATALOGUE.map((group) => ({
    ...group,
    voices: group.voices.map((voice) => ({ ...voice })),
  }));
}

/**
 * The WAV bytes of `POST /tts/preview` (8 kHz 16-bit mono): `text is required`, at most 500
 * characters. Writes nothing anywhere.
 */
export function previewSpeech(deps: DomainDeps, request: SpeechRequest): Promise<Uint8Array> {
  return asBadRequest(() => previewWav(speechEngineOf(deps), request));
}

/** 429 of `generate-greeting` while the same org's previous synthesis is still running. */
export const GREETING_BUSY =
  "A greeting is already being generated for this org; try again when it finishes";

// Orgs with a greeting synthesis running: one at a time per org, so one tenant cannot hold every
// CPU with parallel long texts. Process-wide on purpose: the engine is shared by every app.
const synthesizing = new Set<string>();

export interface GeneratedGreeting {
  success: true;
  greeting_prompt: string;
  greeting_language: string;
  greeting_voice: string;
}

/**
 * `POST /ivrs/{id}/generate-greeting`: speaks `text` (no length cap; chunked, off the event loop
 * with the worker engine), writes `<sounds>/greetings/greeting_ivr_<id>.wav` atomically (a
 * regeneration replaces it) and stores greeting_prompt, greeting_language and greeting_voice.
 * Without language and voice the IVR's own are used. 404 `IVR not found` for another org's IVR.
 */
export async function generateIvrGreeting(
  deps: DomainDeps,
  orgId: string,
  id: string,
  request: SpeechRequest,
  signal?: AbortSignal,
): Promise<GeneratedGreeting> {
  const { row } = await ownIvrRecord(deps.db, orgId, id);
  const cap = deps.config.greetingMaxChars;
  if (cap !== null && typeof request.text === "string" && [...request.text].length > cap) {
    throw new BadRequest(`greeting text must be ≤ ${cap} characters`);
  }
  const speech: SpeechRequest = {
    text: request.text ?? null,
    language: request.language || (request.voice ? null : row.greeting_language),
    voice: request.voice || (request.language ? null : row.greeting_voice),
  };
  if (synthesizing.has(orgId)) throw new TooManyRequests(GREETING_BUSY);
  synthesizing.add(orgId);
  let audio: Awaited<ReturnType<typeof greetingWav>>;
  try {
    audio = await asBadRequest(() =>
      greetingWav(speechEngineOf(deps), speech, signal ? { signal } : {}),
    );
  } finally {
    synthesizing.delete(orgId);
  }
  const prompt = greetingPrompt(id);
  const now = deps.clock().toISOString();
  // The file is written inside the transaction that re-checks the IVR, so a greeting is never
  // left behind for an IVR deleted meanwhile (the delete removes the file after its commit).
  await changeOrgConfig(deps, orgId, async (trx) => {
    await ownIvrRecord(trx, orgId, id);
    await writeGreeting(deps.config.soundsDir, id, audio.wav);
    await createIvrRepository(trx, deps.clock).setGreeting(orgId, id, {
      greeting_prompt: prompt,
      greeting_language: audio.language,
      greeting_voice: audio.voice,
      updated_at: now,
    });
  });
  return {
    success: true,
    greeting_prompt: prompt,
    greeting_language: audio.language,
    greeting_voice: audio.voice,
  };
}

/** An open greeting file and its size; the caller streams it and closes the handle. */
export type GreetingFile = SizedFile;

/**
 * Opens the IVR's greeting for playback: 404 `IVR not found` for another org's or a missing IVR,
 * 404 `Greeting not generated yet` when it has none. The handle keeps the file readable even if a
 * regeneration replaces it meanwhile (rename swaps the name, not this file).
 */
export async function openIvrGreeting(
  deps: DomainDeps,
  orgId: string,
  id: string,
): Promise<GreetingFile> {
  const { row } = await ownIvrRecord(deps.db, orgId, id);
  if (!row.greeting_prompt) throw new NotFound(GREETING_NOT_GENERATED);
  return openSizedFile(
    greetingPath(deps.config.soundsDir, id),
    () => new NotFound(GREETING_NOT_GENERATED),
  );
}

/**
 * Deletes the greeting file of a deleted IVR. Best effort: the IVR is already gone, and a file
 * left behind is harmless (the next IVR gets a new id), so a failure does not fail the delete.
 */
export async function removeIvrGreeting(deps: DomainDeps, id: string): Promise<void> {
  try {
    await removeGreeting(deps.config.soundsDir, id);
  } catch {
    // see above
  }
}
