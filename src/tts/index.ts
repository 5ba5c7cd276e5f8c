// Public surface of the speech layer (what `src/api`, `src/domain` and `src/cli` import). Only
// what a caller uses is listed; modules inside the layer import each other directly.
export type { PcmAudio, SpeechEngine } from "./engine.js";
export { TtsError, TtsInputError } from "./errors.js";
export { greetingPath, greetingPrompt, removeGreeting, writeGreeting } from "./greetings.js";
export { TELEPHONY_SAMPLE_RATE } from "./resample.js";
export { createSpeechEngine, type EngineName } from "./select-engine.js";
export { greetingWav, PREVIEW_MAX_CHARS, previewWav, type SpeechRequest } from "./synthesize.js";
export {
  resolveVoice,
  VOICE_CATALOGUE,
  type VoiceCatalogue,
  VoiceCatalogueSchema,
} from "./voices.js";
export { parseWav } from "./wav.js";
