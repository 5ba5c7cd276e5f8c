// Conversion to the telephony rate. Uses wavefile's windowed-sinc resampler with its low-pass
// filter on: without it, energy above 4 kHz (sibilants) folds back into the speech band.
import type wavefilePackage from "wavefile";
import { packageOnFirstUse } from "../lazy-package.js";
import type { PcmAudio } from "./engine.js";

/** Loaded by the first conversion: most processes never convert audio. */
const wavefile = packageOnFirstUse<typeof wavefilePackage>("wavefile");

/** The sample rate of every file the PBX plays (Asterisk's native slin). */
export const TELEPHONY_SAMPLE_RATE = 8000;

/** Returns `audio` at `targetRate` (a copy-free no-op when it is already there). */
export function resample(audio: PcmAudio, targetRate = TELEPHONY_SAMPLE_RATE): PcmAudio {
  if (audio.sampleRate === targetRate || audio.pcm.length === 0) {
    return { pcm: audio.pcm, sampleRate: targetRate };
  }
  const wav = new (wavefile().WaveFile)();
  wav.fromScratch(1, audio.sampleRate, "16", audio.pcm);
  wav.toSampleRate(targetRate, { method: "sinc", LPF: true });
  const pcm = wav.getSamples(false, Int16Array) as unknown as Int16Array;
  return { pcm, sampleRate: targetRate };
}
