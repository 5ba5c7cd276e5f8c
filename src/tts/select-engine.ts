// Builds the speech engine named by the configuration (config.ts's ttsEngineFrom:
// PBX_TTS_ENGINE, default `espeak`).
import { type TtsEngineName, ttsEngineFrom } from "../config.js";
import type { SpeechEngine } from "./engine.js";
import { EspeakEngine } from "./espeak-engine.js";
import { GoogleEngine, type GoogleTtsClient } from "./google-engine.js";
import { WorkerSpeechEngine } from "./worker-engine.js";

export type EngineName = TtsEngineName;

export interface EngineOptions {
  /** Engine to use; default the process's PBX_TTS_ENGINE (config.ts). */
  engine?: EngineName;
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
  const name = options.engine ?? ttsEngineFrom(process.env);
  if (name === "google") return new GoogleEngine(options.googleClient);
  return options.worker === false ? new EspeakEngine() : new WorkerSpeechEngine();
}
