// Chooses the speech engine from `PBX_TTS_ENGINE` (default `espeak`).
import type { SpeechEngine } from "./engine.js";
import { TtsEngineError } from "./errors.js";
import { EspeakEngine } from "./espeak-engine.js";
import { GoogleEngine, type GoogleTtsClient } from "./google-engine.js";
import { WorkerSpeechEngine } from "./worker-engine.js";

export const ENGINE_NAMES = ["espeak", "google"] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** Reads `PBX_TTS_ENGINE`; unset or empty means `espeak`; anything else unknown throws. */
export function engineNameFromEnv(env: Readonly<Record<string, string | undefined>>): EngineName {
  const value = (env.PBX_TTS_ENGINE ?? "").trim().toLowerCase() || "espeak";
  if (!(ENGINE_NAMES as readonly string[]).includes(value)) {
    throw new TtsEngineError(
      `Unknown PBX_TTS_ENGINE '${env.PBX_TTS_ENGINE}' (expected ${ENGINE_NAMES.join(" or ")})`,
    );
  }
  return value as EngineName;
}

export interface EngineOptions {
  /** Engine to use; default from `env` (`PBX_TTS_ENGINE`). */
  engine?: EngineName;
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Run eSpeak NG in a worker thread (default true: what a server wants). A one-shot CLI
   * passes false and saves the thread's start-up.
   */
  worker?: boolean;
  /** Google client to use instead of the real one (tests). */
  googleClient?: GoogleTtsClient;
}

/** Builds the configured engine; nothing starts until its first use (or `warm()`). */
export function createSpeechEngine(options: EngineOptions = {}): SpeechEngine {
  const name = options.engine ?? engineNameFromEnv(options.env ?? process.env);
  if (name === "google") return new GoogleEngine(options.googleClient);
  return options.worker === false ? new EspeakEngine() : new WorkerSpeechEngine();
}
