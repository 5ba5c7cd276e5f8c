// Typed errors of the speech layer. `TtsInputError`s are the caller's fault (the API answers 400
// with the message as is); `TtsEngineError`s are the engine's (500, or a clear CLI error).

/** Base class of every error raised by `src/tts`. */
export class TtsError extends Error {
  override name = "TtsError";
}

/** Bad input from the caller: the message is meant to be shown to them verbatim. */
export class TtsInputError extends TtsError {
  override name = "TtsInputError";
}

/** `text` missing or blank (SPEC.md §7: `text is required`). */
export class TextRequiredError extends TtsInputError {
  override name = "TextRequiredError";
  constructor() {
    super("text is required");
  }
}

/** Preview text over the SPEC.md §8 limit. */
export class PreviewTextTooLongError extends TtsInputError {
  override name = "PreviewTextTooLongError";
  constructor(limit: number) {
    super(`preview text must be ≤ ${limit} characters`);
  }
}

/** A language outside the 11 groups of the catalogue. */
export class UnknownLanguageError extends TtsInputError {
  override name = "UnknownLanguageError";
  constructor(
    readonly language: string,
    known: readonly string[],
  ) {
    super(`Unknown language '${language}'; supported: ${known.join(", ")}`);
  }
}

/** A voice that is not in the catalogue for the requested language. */
export class UnknownVoiceError extends TtsInputError {
  override name = "UnknownVoiceError";
  constructor(
    readonly voice: string,
    readonly language: string,
    known: readonly string[],
  ) {
    super(`Unknown voice '${voice}' for language ${language}; available: ${known.join(", ")}`);
  }
}

/** Uploaded audio that is not a WAV file this module can decode. */
export class UnsupportedAudioError extends TtsInputError {
  override name = "UnsupportedAudioError";
}

/** A greeting id that cannot safely become a file name. */
export class InvalidGreetingIdError extends TtsInputError {
  override name = "InvalidGreetingIdError";
  constructor(id: string) {
    super(`Invalid IVR id for a greeting file: '${id}'`);
  }
}

/** The engine failed (WASM abort, remote API error, worker crash, bad configuration). */
export class TtsEngineError extends TtsError {
  override name = "TtsEngineError";
}
