// Helpers of the IVR and speech API tests: a fast fake speech engine, a WAV header reader, and a
// listing of every file under a directory (to prove a preview writes nothing).
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { PcmAudio, SpeechEngine } from "../../src/tts/index.js";

/** A speech engine that answers a short 440 Hz tone at 16 kHz and records what it was asked. */
export function fakeSpeechEngine(): SpeechEngine & {
  calls: Array<{ text: string; language: string; voice: string }>;
} {
  const calls: Array<{ text: string; language: string; voice: string }> = [];
  return {
    name: "fake",
    calls,
    async synthesize(text, language, voice): Promise<PcmAudio> {
      calls.push({ text, language, voice });
      const sampleRate = 16_000;
      const pcm = new Int16Array(sampleRate / 10);
      for (let i = 0; i < pcm.length; i++) {
        pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / sampleRate));
      }
      return { pcm, sampleRate };
    },
  };
}

export interface WavHeader {
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  dataBytes: number;
  /** Whether the data chunk's declared size is exactly what follows it. */
  dataLengthMatches: boolean;
}

/** Reads the RIFF/WAVE header (fmt and data chunks) of `bytes`; throws when it is not one. */
export function readWavHeader(bytes: Uint8Array): WavHeader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("not a RIFF/WAVE file");
  let offset = 12;
  let fmt: Omit<WavHeader, "dataBytes" | "dataLengthMatches"> | undefined;
  while (offset + 8 <= bytes.length) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    if (id === "fmt ") {
      fmt = {
        format: view.getUint16(offset + 8, true),
        channels: view.getUint16(offset + 10, true),
        sampleRate: view.getUint32(offset + 12, true),
        bitsPerSample: view.getUint16(offset + 22, true),
      };
    } else if (id === "data") {
      if (!fmt) throw new Error("data chunk before fmt chunk");
      return { ...fmt, dataBytes: size, dataLengthMatches: offset + 8 + size === bytes.length };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error("no data chunk");
}

/** Every file under `dir` (relative paths, sorted); empty when `dir` does not exist. */
export function listFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (current: string) => {
    let entries: string[];
    try {
      entries = readdirSync(current);
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(current, entry);
      if (statSync(full).isDirectory()) walk(full);
      else found.push(relative(dir, full));
    }
  };
  walk(dir);
  return found.sort();
}
