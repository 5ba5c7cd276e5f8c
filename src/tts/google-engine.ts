// Google Cloud Text-to-Speech (`PBX_TTS_ENGINE=google`). Credentials are Google's usual ones
// (GOOGLE_APPLICATION_CREDENTIALS or the platform's metadata server), read by the client library.
import type { PcmAudio, SpeechEngine } from "./engine.js";
import { TtsEngineError } from "./errors.js";
import { TELEPHONY_SAMPLE_RATE } from "./resample.js";
import { resolveVoice } from "./voices.js";
import { parseWav, readPcm16 } from "./wav.js";

/** The one call of `TextToSpeechClient` this engine makes (what tests stub). */
export interface GoogleTtsClient {
  synthesizeSpeech(request: {
    input: { text: string };
    voice: { languageCode: string; name: string };
    audioConfig: { audioEncoding: "LINEAR16"; sampleRateHertz: number };
  }): Promise<[{ audioContent?: Uint8Array | string | null }, ...unknown[]]>;
  close?(): Promise<void>;
}

/** Loads the real client lazily so the package costs nothing unless this engine is chosen. */
export async function createGoogleClient(): Promise<GoogleTtsClient> {
  const { TextToSpeechClient } = await import("@google-cloud/text-to-speech");
  return new TextToSpeechClient() as unknown as GoogleTtsClient;
}

/** Asks Google for LINEAR16 at 8 kHz with the catalogue voice name passed through unchanged. */
export class GoogleEngine implements SpeechEngine {
  readonly name = "google";
  private client: Promise<GoogleTtsClient> | undefined;
  private factory: () => Promise<GoogleTtsClient> = createGoogleClient;

  /** `client`: a ready client, or a factory called at the first synthesis (default: the real one). */
  constructor(client?: GoogleTtsClient | (() => Promise<GoogleTtsClient>)) {
    if (typeof client === "function") this.factory = client;
    else if (client) this.client = Promise.resolve(client);
  }

  async synthesize(text: string, language: string, voice: string): Promise<PcmAudio> {
    const { group, voice: resolved } = resolveVoice(language, voice);
    this.client ??= this.factory();
    const client = await this.client;
    let response: { audioContent?: Uint8Array | string | null };
    try {
      [response] = await client.synthesizeSpeech({
        input: { text },
        voice: { languageCode: group.language, name: resolved.name },
        audioConfig: { audioEncoding: "LINEAR16", sampleRateHertz: TELEPHONY_SAMPLE_RATE },
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new TtsEngineError(`Google Text-to-Speech failed: ${message}`);
    }
    return decodeLinear16(response.audioContent);
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await (await client)?.close?.();
  }
}

// LINEAR16 answers carry a WAV header (Google's docs); headerless PCM is accepted too.
function decodeLinear16(content: Uint8Array | string | null | undefined): PcmAudio {
  if (content == null || content.length === 0) {
    throw new TtsEngineError("Google Text-to-Speech returned no audio");
  }
  const bytes = typeof content === "string" ? Buffer.from(content, "base64") : content;
  if (bytes.length >= 12 && Buffer.from(bytes.subarray(0, 4)).toString("latin1") === "RIFF") {
    const wav = parseWav(bytes);
    if (wav.audioFormat !== 1 || wav.bitsPerSample !== 16) {
      throw new TtsEngineError("Google Text-to-Speech returned audio that is not 16-bit PCM");
    }
    return { pcm: wav.pcm, sampleRate: wav.sampleRate };
  }
  return { pcm: readPcm16(bytes, 0, bytes.length >> 1, 2), sampleRate: TELEPHONY_SAMPLE_RATE };
}
