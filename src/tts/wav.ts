// RIFF/WAVE encoding and parsing for 16-bit PCM, the only format the PBX writes.
import { TtsEngineError } from "./errors.js";

const HEADER_BYTES = 44;

/** Builds a canonical 44-byte-header RIFF/WAVE file: PCM (format 1), 16-bit, one channel. */
export function encodeWav(pcm: Int16Array, sampleRate: number): Uint8Array {
  const dataBytes = pcm.length * 2;
  const out = new Uint8Array(HEADER_BYTES + dataBytes);
  const view = new DataView(out.buffer);
  const ascii = (offset: number, text: string) => {
    for (let i = 0; i < text.length; i++) out[offset + i] = text.charCodeAt(i);
  };
  ascii(0, "RIFF");
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // channels
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // byte rate
  view.setUint16(32, 2, true); // block align
  view.setUint16(34, 16, true); // bits per sample
  ascii(36, "data");
  view.setUint32(40, dataBytes, true);
  // Explicit little-endian copy: Int16Array uses the host order, RIFF is always little-endian.
  for (let i = 0; i < pcm.length; i++) view.setInt16(HEADER_BYTES + i * 2, pcm[i]!, true);
  return out;
}

export interface ParsedWav {
  audioFormat: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  /** Size the `data` chunk header declares. */
  declaredDataBytes: number;
  /** The samples of the first channel (16-bit PCM only; empty otherwise). */
  pcm: Int16Array;
}

/**
 * Reads a RIFF/WAVE file, walking its chunks; throws `TtsEngineError` when it is not one.
 * A `data` size larger than the file (streaming writers put 0x7fffffff there) is clamped.
 */
export function parseWav(bytes: Uint8Array): ParsedWav {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (offset: number) => String.fromCharCode(...bytes.subarray(offset, offset + 4));
  if (bytes.byteLength < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") {
    throw new TtsEngineError("audio is not a RIFF/WAVE file");
  }
  let fmt: Omit<ParsedWav, "pcm" | "declaredDataBytes"> | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.byteLength) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === "fmt ") {
      fmt = {
        audioFormat: view.getUint16(body, true),
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bitsPerSample: view.getUint16(body + 14, true),
      };
    } else if (id === "data") {
      if (!fmt) throw new TtsEngineError("WAV data chunk before its fmt chunk");
      const available = Math.min(size, bytes.byteLength - body);
      const frameBytes = 2 * fmt.channels;
      const pcm =
        fmt.audioFormat === 1 && fmt.bitsPerSample === 16
          ? readPcm16(bytes, body, Math.floor(available / frameBytes), frameBytes)
          : new Int16Array(0);
      return { ...fmt, declaredDataBytes: size, pcm };
    }
    offset = body + size + (size % 2); // chunks are word-aligned
  }
  throw new TtsEngineError("WAV file has no data chunk");
}

/** Reads `count` little-endian 16-bit samples from `offset`, one every `strideBytes`. */
export function readPcm16(
  bytes: Uint8Array,
  offset: number,
  count: number,
  strideBytes: number,
): Int16Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pcm = new Int16Array(count);
  for (let i = 0; i < count; i++) pcm[i] = view.getInt16(offset + i * strideBytes, true);
  return pcm;
}
