// The one interface every speech engine implements, and the audio shape it returns.

/** Mono 16-bit PCM samples and their rate. */
export interface PcmAudio {
  pcm: Int16Array;
  sampleRate: number;
}

/** A speech synthesizer. `voice` is a catalogue name already checked by `resolveVoice`. */
export interface SpeechEngine {
  /** `espeak`, `google`, or a wrapper's name (`espeak (worker)`). */
  readonly name: string;
  /** Speaks `text` (one chunk, any length the engine accepts) in `language` with `voice`. */
  synthesize(text: string, language: string, voice: string): Promise<PcmAudio>;
  /** Releases what the engine holds (a worker thread, a client); safe to call twice. */
  close?(): Promise<void>;
}
