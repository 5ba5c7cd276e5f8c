// The embedded default engine: eSpeak NG in WebAssembly, fully offline, voice data bundled.
import type { PcmAudio, SpeechEngine } from "./engine.js";
import { TtsEngineError } from "./errors.js";
import { type EspeakRunResult, EspeakRuntime } from "./espeak-runtime.js";
import { resolveVoice } from "./voices.js";
import { parseWav } from "./wav.js";

const INPUT_PATH = "/tmp/input.txt";
const OUTPUT_PATH = "/tmp/output.wav";

/** Speaks catalogue voices with their eSpeak NG voice+variant; output is 22050 Hz mono PCM. */
export class EspeakEngine implements SpeechEngine {
  readonly name = "espeak";
  private runtime: Promise<EspeakRuntime> | undefined;

  /** Starts the WASM instance now instead of at the first synthesis (cold start off the path). */
  async warm(): Promise<void> {
    await this.instance();
  }

  async synthesize(text: string, language: string, voice: string): Promise<PcmAudio> {
    const { voice: resolved } = resolveVoice(language, voice);
    const runtime = await this.instance();
    // Text goes through a file, not argv: a text starting with "-" must not become an option.
    runtime.writeFile(INPUT_PATH, text);
    let result: EspeakRunResult;
    let wav: Uint8Array | undefined;
    try {
      result = runtime.run(["-v", resolved.espeak, "-w", OUTPUT_PATH, "-f", INPUT_PATH]);
      wav = runtime.takeFile(OUTPUT_PATH);
    } finally {
      if (runtime.isBroken) this.runtime = undefined;
    }
    if (result.status !== 0 || !wav) {
      const detail = result.stderr.join(" ").trim() || `exit status ${result.status}`;
      throw new TtsEngineError(`eSpeak NG failed for voice ${resolved.espeak}: ${detail}`);
    }
    const parsed = parseWav(wav);
    return { pcm: parsed.pcm, sampleRate: parsed.sampleRate };
  }

  async close(): Promise<void> {
    this.runtime = undefined;
  }

  private instance(): Promise<EspeakRuntime> {
    if (!this.runtime) {
      const starting = EspeakRuntime.start();
      this.runtime = starting;
      starting.catch(() => {
        if (this.runtime === starting) this.runtime = undefined;
      });
    }
    return this.runtime;
  }
}
