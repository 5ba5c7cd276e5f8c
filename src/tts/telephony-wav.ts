// Uploaded audio to what the engine plays natively: any supported WAV (PCM, IEEE float, A-law,
// mu-law; any rate, any channel count) decoded, mixed down to one channel and resampled to an
// 8 kHz, 16-bit, mono PCM WAV. A file it cannot use is an `UnsupportedAudioError` (the caller's
// fault: the API answers 400 with its message).
import type wavefilePackage from "wavefile";
import { packageOnFirstUse } from "../lazy-package.js";
import { UnsupportedAudioError } from "./errors.js";
import { resample, TELEPHONY_SAMPLE_RATE } from "./resample.js";
import { encodeWav, parseWav } from "./wav.js";

/** Loaded by the first conversion: most processes never convert audio. */
const wavefile = packageOnFirstUse<typeof wavefilePackage>("wavefile");

const DECODABLE_FORMATS: Record<number, string> = {
  1: "PCM",
  3: "IEEE float",
  6: "A-law",
  7: "mu-law",
  65534: "extensible",
};

/** Samples of `bytes` as one 16-bit channel (channels averaged) at the file's own rate. */
function decodeMono16(bytes: Uint8Array): { pcm: Int16Array; sampleRate: number } {
  let info: ReturnType<typeof parseWav>;
  try {
    info = parseWav(bytes);
  } catch (error) {
    throw new UnsupportedAudioError(`Upload a WAV file: ${(error as Error).message}`);
  }
  if (info.sampleRate < 1000 || info.sampleRate > 192000 || info.channels < 1) {
    throw new UnsupportedAudioError(
      `Unsupported WAV: ${info.channels} channels at ${info.sampleRate} Hz`,
    );
  }
  if (info.audioFormat === 1 && info.bitsPerSample === 16 && info.channels === 1) {
    return { pcm: info.pcm, sampleRate: info.sampleRate };
  }
  if (DECODABLE_FORMATS[info.audioFormat] === undefined) {
    throw new UnsupportedAudioError(
      `Unsupported WAV encoding (format ${info.audioFormat}): use PCM, IEEE float, A-law or mu-law`,
    );
  }
  // Other encodings and multi-channel files: wavefile decodes them to 16-bit samples.
  try {
    const wav = new (wavefile().WaveFile)(bytes);
    if (info.audioFormat === 7) wav.fromMuLaw();
    else if (info.audioFormat === 6) wav.fromALaw();
    else if (info.bitsPerSample !== 16) wav.toBitDepth("16");
    const samples = wav.getSamples(false, Int16Array) as unknown as Int16Array | Int16Array[];
    return { pcm: mixDown(samples), sampleRate: info.sampleRate };
  } catch (error) {
    if (error instanceof UnsupportedAudioError) throw error;
    throw new UnsupportedAudioError(`Could not decode the WAV file: ${(error as Error).message}`);
  }
}

function mixDown(samples: Int16Array | Int16Array[]): Int16Array {
  if (!Array.isArray(samples)) return samples;
  const [first] = samples;
  if (!first) return new Int16Array(0);
  if (samples.length === 1) return first;
  const mono = new Int16Array(first.length);
  for (let i = 0; i < mono.length; i++) {
    let sum = 0;
    for (const channel of samples) sum += channel[i] ?? 0;
    mono[i] = Math.round(sum / samples.length);
  }
  return mono;
}

/** Any supported WAV as an 8 kHz, 16-bit, mono PCM WAV (Asterisk's native slin). */
export function toTelephonyWav(bytes: Uint8Array): Uint8Array {
  const audio = decodeMono16(bytes);
  if (audio.pcm.length === 0) throw new UnsupportedAudioError("The WAV file holds no audio");
  const converted = resample(audio, TELEPHONY_SAMPLE_RATE);
  return encodeWav(converted.pcm, TELEPHONY_SAMPLE_RATE);
}
