// Shared checks of the speech tests: the WAV header as Asterisk needs it, and simple signal
// measures (tone power, non-silent samples) that do not depend on the engine's exact output.
import * as assert from "uvu/assert";
import { parseWav } from "../../src/tts/wav.js";

/** Asserts a canonical PCM 16-bit 8 kHz mono RIFF file whose sizes match the byte length. */
export function assertTelephonyWav(wav: Uint8Array): Int16Array {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const tag = (offset: number) => Buffer.from(wav.subarray(offset, offset + 4)).toString("latin1");
  assert.is(tag(0), "RIFF");
  assert.is(view.getUint32(4, true), wav.byteLength - 8, "RIFF size = file size - 8");
  assert.is(tag(8), "WAVE");
  assert.is(tag(12), "fmt ");
  assert.is(view.getUint32(16, true), 16, "fmt chunk size");
  assert.is(view.getUint16(20, true), 1, "audio format PCM");
  assert.is(view.getUint16(22, true), 1, "one channel");
  assert.is(view.getUint32(24, true), 8000, "8000 Hz");
  assert.is(view.getUint32(28, true), 16000, "byte rate");
  assert.is(view.getUint16(32, true), 2, "block align");
  assert.is(view.getUint16(34, true), 16, "16 bits");
  assert.is(tag(36), "data");
  assert.is(view.getUint32(40, true), wav.byteLength - 44, "data size = file size - 44");
  const parsed = parseWav(wav);
  assert.is(parsed.pcm.length, (wav.byteLength - 44) / 2);
  return parsed.pcm;
}

/** Samples louder than about -36 dBFS: speech, not the silence around it. */
export function nonSilentSamples(pcm: Int16Array, threshold = 500): number {
  let count = 0;
  for (const sample of pcm) if (Math.abs(sample) > threshold) count++;
  return count;
}

/** Amplitude of the `frequency` component (Goertzel), normalised per sample. */
export function tonePower(samples: ArrayLike<number>, frequency: number, rate: number): number {
  const k = 2 * Math.cos((2 * Math.PI * frequency) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < samples.length; i++) {
    const s0 = samples[i]! + k * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return Math.sqrt(Math.max(0, s1 * s1 + s2 * s2 - k * s1 * s2)) / samples.length;
}

/** A sum of sines, 16-bit. */
export function sines(rate: number, seconds: number, tones: Array<[number, number]>): Int16Array {
  const out = new Int16Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++) {
    let value = 0;
    for (const [frequency, amplitude] of tones) {
      value += amplitude * Math.sin((2 * Math.PI * frequency * i) / rate);
    }
    out[i] = Math.round(value);
  }
  return out;
}
