import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Args, Flags } from "@oclif/core";
import { TTS_ENGINE_NAMES, ttsEngineFrom } from "../../../config.js";
import type { SpeechEngine } from "../../../tts/engine.js";
import type { EngineName } from "../../../tts/select-engine.js";
import { VOICE_CATALOGUE } from "../../../tts/voices.js";
import { CommandFailure, PbxCommand } from "../../lib/base-command.js";

export interface SayResult {
  out: string;
  bytes: number;
  durationSeconds: number;
  sampleRate: number;
  language: string;
  voice: string;
  engine: EngineName;
}

export default class TtsSay extends PbxCommand {
  static override summary = "Speak a text into an 8 kHz 16-bit mono WAV file.";
  static override description =
    "Uses the engine of PBX_TTS_ENGINE (default espeak, offline). Long texts are synthesized in " +
    "sentence chunks. The file is what an IVR greeting would contain.";
  static override examples = [
    '<%= config.bin %> <%= command.id %> "Welcome to Acme" --out hello.wav',
    '<%= config.bin %> <%= command.id %> "नमस्ते" --language hi-IN --voice hi-IN-Wavenet-A --out hello.wav',
  ];
  static override args = {
    text: Args.string({ description: "text to speak", required: true }),
  };
  static override flags = {
    language: Flags.string({
      char: "l",
      summary: "language group",
      options: VOICE_CATALOGUE.map((group) => group.language),
      default: "en-IN",
    }),
    voice: Flags.string({ summary: "voice name (default: the language's default voice)" }),
    out: Flags.string({ char: "o", summary: "WAV file to write", required: true }),
    engine: Flags.string({
      summary: "speech engine (default: PBX_TTS_ENGINE, else espeak)",
      options: [...TTS_ENGINE_NAMES],
    }),
  };

  async run(): Promise<SayResult> {
    const { args, flags } = await this.parse(TtsSay);
    // Loaded on use: `pbxctl --help` loads every command module.
    const tts = await import("../../../tts/index.js");
    let engine: SpeechEngine | undefined;
    try {
      const engineName = (flags.engine as EngineName | undefined) ?? ttsEngineFrom(process.env);
      // One-shot process: no worker thread to start, the chunks run right here.
      engine = tts.createSpeechEngine({ engine: engineName, worker: false });
      const { wav, language, voice } = await tts.greetingWav(engine, {
        text: args.text,
        language: flags.language,
        voice: flags.voice,
      });
      const out = resolve(flags.out);
      await writeFile(out, wav);
      const sampleRate = tts.TELEPHONY_SAMPLE_RATE;
      const durationSeconds = Math.round((tts.parseWav(wav).pcm.length / sampleRate) * 100) / 100;
      if (!this.jsonEnabled()) {
        this.log(
          `Wrote ${flags.out}: ${durationSeconds} s, 8 kHz 16-bit mono, ${voice} (${engineName})`,
        );
      }
      return {
        out,
        bytes: wav.length,
        durationSeconds,
        sampleRate,
        language,
        voice,
        engine: engineName,
      };
    } catch (error) {
      if (error instanceof tts.TtsError) throw new CommandFailure(error.message);
      throw error;
    } finally {
      await engine?.close?.();
    }
  }
}
