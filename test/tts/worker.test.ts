// The worker path: long greetings are synthesized off the main thread, chunk by chunk.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { TtsInputError } from "../../src/tts/errors.js";
import { EspeakEngine } from "../../src/tts/espeak-engine.js";
import { synthesizeLong, synthesizeWav } from "../../src/tts/synthesize.js";
import { WorkerSpeechEngine } from "../../src/tts/worker-engine.js";
import { assertTelephonyWav, nonSilentSamples } from "./audio-helpers.js";

const worker = new WorkerSpeechEngine();

test.before(async () => {
  await worker.warm();
});

test.after(async () => {
  await worker.close();
});

test("the worker engine gives the same 8 kHz audio as the in-thread engine", async () => {
  const text = "Your call is important to us. Please stay on the line.";
  const direct = await synthesizeLong(new EspeakEngine(), text, "en-GB", "en-GB-Wavenet-B");
  const viaWorker = await synthesizeLong(worker, text, "en-GB", "en-GB-Wavenet-B");
  assert.is(viaWorker.sampleRate, 8000);
  assert.is(viaWorker.pcm.length, direct.pcm.length);
  assert.ok(viaWorker.pcm.every((value, i) => value === direct.pcm[i]));
});

test("a long greeting is spoken whole while the event loop keeps turning", async () => {
  const sentence = "Please listen carefully, as our menu options have changed recently. ";
  const text = sentence.repeat(20); // ~1,400 characters, 4 chunks, over a minute of audio
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
  }, 5);
  const started = performance.now();
  let wav: Uint8Array;
  try {
    wav = await synthesizeWav(worker, text, "en-US", "en-US-Wavenet-A");
  } finally {
    clearInterval(timer);
  }
  const elapsed = performance.now() - started;
  const pcm = assertTelephonyWav(wav);
  const seconds = pcm.length / 8000;
  assert.ok(seconds > 40, `whole text spoken: ${seconds} s`);
  assert.ok(nonSilentSamples(pcm) > 20 * 8000);
  // Synthesis blocks its thread for hundreds of ms per chunk: on the main thread the timer could
  // fire at most once between chunks (4 chunks, a handful of ticks). Off it, the loop keeps
  // turning throughout. Counted, not timed: a loaded machine slows both sides alike.
  assert.ok(ticks >= 20, `only ${ticks} timer ticks in ${elapsed.toFixed(0)} ms of synthesis`);
});

test("errors from the worker keep their kind", async () => {
  await worker.synthesize("hello", "xx-XX", "nope").then(
    () => assert.unreachable(),
    (error) => {
      assert.instance(error, TtsInputError);
      assert.match(error.message, /Unknown language 'xx-XX'/);
    },
  );
});

test("an idle worker is stopped, and the next request starts a new one", async () => {
  let stopped!: () => void;
  const stoppedOnce = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  const idle = new WorkerSpeechEngine({ idleMs: 1, onIdleStop: () => stopped() });
  try {
    await idle.synthesize("One.", "en-US", "en-US-Wavenet-A");
    // The idle timer is unref'd (it must never keep a process alive): hold the loop open.
    const keepAlive = setInterval(() => {}, 1000);
    await stoppedOnce.finally(() => clearInterval(keepAlive));
    assert.not.ok(idle.isRunning);
    const again = await idle.synthesize("Two.", "en-US", "en-US-Wavenet-A");
    assert.ok(again.pcm.length > 0);
  } finally {
    await idle.close();
  }
});

test.run();
