// Public surface of the speech layer (what `src/api` and `src/cli` import).
export { DEFAULT_CHUNK_CHARS, splitIntoChunks } from "./chunk-text.js";
export type { PcmAudio, SpeechEngine } from "./engine.js";
export {
  InvalidGreetingIdError,
  PreviewTextTooLongError,
  TextRequiredError,
  TtsEngineError,
  TtsError,
  TtsInputError,
  UnknownLanguageError,
  UnknownVoiceError,
} from "./errors.js";
export { EspeakEngine } from "./espeak-engine.js";
export { GoogleEngine, type GoogleTtsClient } from "./google-engine.js";
export {
  GREETINGS_DIR,
  greetingPath,
  greetingPrompt,
  removeGreeting,
  writeGreeting,
} from "./greetings.js";
export { resample, TELEPHONY_SAMPLE_RATE } from "./resample.js";
export {
  createSpeechEngine,
  ENGINE_NAMES,
  type EngineName,
  type EngineOptions,
  engineNameFromEnv,
} from "./select-engine.js";
export {
  greetingWav,
  PREVIEW_MAX_CHARS,
  previewWav,
  type SpeechRequest,
  type SynthesizeOptions,
  synthesizeLong,
  synthesizeWav,
} from "./synthesize.js";
export {
  DEFAULT_LANGUAGE,
  type LanguageGroup,
  resolveVoice,
  VOICE_CATALOGUE,
  type Voice,
  type VoiceCatalogue,
  VoiceCatalogueSchema,
  type VoiceGender,
  VoiceSchema,
} from "./voices.js";
export { encodeWav, type ParsedWav, parseWav } from "./wav.js";
export { type WorkerEngineOptions, WorkerSpeechEngine } from "./worker-engine.js";
