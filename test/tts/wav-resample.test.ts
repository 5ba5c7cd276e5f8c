import { test } from "uvu";
import * as assert from "uvu/assert";
import { TtsEngineError } from "../../src/tts/errors.js";
import { resample } from "../../src/tts/resample.js";
import { encodeWav, parseWav } from "../../src/tts/wav.js";
import { assertTelephonyWav, sines, tonePower } from "./audio-helpers.js";

test("encodeWav writes a canonical 8 kHz 16-bit mono header and parseWav reads it back", () => {
  const pcm = Int16Array.from([0, 1, -1, 32767, -32768, 1234]);
  const wav = encodeWav(pcm, 8000);
  assert.is(wav.byteLength, 44 + 12);
  assert.equal([...assertTelephonyWav(wav)], [...pcm]);
  // Little-endian on the wire whatever the host: 1234 = 0x04d2.
  assert.equal([wav[54], wav[55]], [0xd2, 0x04]);
});

test("parseWav walks chunks, skips unknown ones and clamps a streaming data size", () => {
  const base = encodeWav(Int16Array.from([5, -5, 7]), 22050);
  const list = Buffer.from("LIST\x04\x00\x00\x00abcd", "latin1");
  const withList = Buffer.concat([base.subarray(0, 36), list, base.subarray(36)]);
  withList.writeUInt32LE(0x7fffffff, 36 + list.length + 4); // "unknown length" as streamers write
  const parsed = parseWav(withList);
  assert.is(parsed.sampleRate, 22050);
  assert.equal([...parsed.pcm], [5, -5, 7]);
  assert.throws(
    () => parseWav(new Uint8Array(20)),
    (e: unknown) => e instanceof TtsEngineError,
  );
});

test("resampling 22050 -> 8000 keeps a sine's frequency and level", () => {
  const input = sines(22050, 1, [[1000, 10000]]);
  const out = resample({ pcm: input, sampleRate: 22050 });
  assert.is(out.sampleRate, 8000);
  assert.ok(Math.abs(out.pcm.length - 8000) <= 2, `length ${out.pcm.length}`);
  const at1k = tonePower(out.pcm, 1000, 8000);
  assert.ok(at1k > 4000 && at1k < 5500, `1 kHz amplitude ${at1k}`); // Goertzel gives A/2
  assert.ok(tonePower(out.pcm, 1500, 8000) < at1k / 50, "no energy moved to another frequency");
  // Zero crossings: 2 per period, 1000 periods in one second.
  let crossings = 0;
  for (let i = 1; i < out.pcm.length; i++) if (out.pcm[i - 1]! < 0 !== out.pcm[i]! < 0) crossings++;
  assert.ok(Math.abs(crossings - 2000) <= 4, `crossings ${crossings}`);
});

test("resampling filters what is above 4 kHz instead of folding it into the speech band", () => {
  // 6 kHz at 22050 Hz would alias to 2 kHz if samples were merely dropped.
  const input = sines(22050, 1, [
    [440, 8000],
    [6000, 8000],
  ]);
  const out = resample({ pcm: input, sampleRate: 22050 });
  const wanted = tonePower(out.pcm, 440, 8000);
  const alias = tonePower(out.pcm, 2000, 8000);
  assert.ok(wanted > 3500, `440 Hz kept: ${wanted}`);
  assert.ok(alias < wanted / 100, `alias at 2 kHz ${alias} vs ${wanted}`);
});

test("resample at the target rate returns the samples unchanged", () => {
  const pcm = Int16Array.from([1, 2, 3]);
  assert.is(resample({ pcm, sampleRate: 8000 }).pcm, pcm);
});

test.run();
