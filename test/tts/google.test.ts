// The Google engine with its client stubbed at the boundary: what is asked, what is done with
// the answer. No network.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ttsEngineFrom } from "../../src/config.js";
import { TtsEngineError, UnknownVoiceError } from "../../src/tts/errors.js";
import { GoogleEngine, type GoogleTtsClient } from "../../src/tts/google-engine.js";
import { createSpeechEngine } from "../../src/tts/select-engine.js";
import { previewWav, synthesizeLong } from "../../src/tts/synthesize.js";
import { encodeWav } from "../../src/tts/wav.js";
import { assertTelephonyWav, sines } from "./audio-helpers.js";

type Request = Parameters<GoogleTtsClient["synthesizeSpeech"]>[0];

function stubClient(answer: (request: Request) => Uint8Array | string | null) {
  const requests: Request[] = [];
  const client: GoogleTtsClient = {
    async synthesizeSpeech(request) {
      requests.push(request);
      return [{ audioContent: answer(request) }];
    },
  };
  return { client, requests };
}

test("asks for LINEAR16 at 8000 Hz with the SPEC voice name passed through", async () => {
  const tone = sines(8000, 0.5, [[440, 8000]]);
  const { client, requests } = stubClient(() => encodeWav(tone, 8000));
  const engine = createSpeechEngine({ engine: "google", googleClient: client });
  assert.is(engine.name, "google");
  const wav = await previewWav(engine, {
    text: "नमस्ते",
    language: "hi-IN",
    voice: "hi-IN-Wavenet-C",
  });
  assert.equal(requests, [
    {
      input: { text: "नमस्ते" },
      voice: { languageCode: "hi-IN", name: "hi-IN-Wavenet-C" },
      audioConfig: { audioEncoding: "LINEAR16", sampleRateHertz: 8000 },
    },
  ]);
  assert.equal([...assertTelephonyWav(wav)], [...tone]);
});

test("the default voice is sent when none is given; base64 and headerless audio are accepted", async () => {
  const { client, requests } = stubClient(() =>
    Buffer.from(Int16Array.from([1, -2, 3]).buffer).toString("base64"),
  );
  const audio = await new GoogleEngine(client).synthesize("Hello", "en-IN", "");
  assert.is(requests[0]?.voice.name, "en-IN-Wavenet-D");
  assert.equal([...audio.pcm], [1, -2, 3]);
  assert.is(audio.sampleRate, 8000);
});

test("a 22050 Hz answer is resampled to 8000 Hz like any engine's", async () => {
  const { client } = stubClient(() => encodeWav(sines(22050, 1, [[500, 8000]]), 22050));
  const audio = await synthesizeLong(new GoogleEngine(client), "Hello", "en-US", "en-US-Wavenet-A");
  assert.is(audio.sampleRate, 8000);
  assert.ok(Math.abs(audio.pcm.length - 8000) <= 2);
});

test("long text goes to Google in chunks, in order", async () => {
  const { client, requests } = stubClient(() => encodeWav(new Int16Array(80), 8000));
  const text = Array.from({ length: 12 }, (_, i) => `Sentence number ${i} is here.`).join(" ");
  const audio = await synthesizeLong(new GoogleEngine(client), text, "en-GB", null, {
    maxChunkChars: 100,
  });
  assert.ok(requests.length >= 4, `${requests.length} requests`);
  assert.is(requests.map((r) => r.input.text).join(" "), text);
  assert.is(audio.pcm.length, 80 * requests.length);
});

test("unknown voices are refused before any call; client failures become TtsEngineError", async () => {
  const { client, requests } = stubClient(() => null);
  const engine = new GoogleEngine(client);
  await engine.synthesize("hi", "ta-IN", "ta-IN-Wavenet-Z").then(
    () => assert.unreachable(),
    (error) => assert.instance(error, UnknownVoiceError),
  );
  assert.is(requests.length, 0);
  await engine.synthesize("hi", "ta-IN", "ta-IN-Wavenet-A").then(
    () => assert.unreachable(),
    (error) => {
      assert.instance(error, TtsEngineError);
      assert.match(error.message, /no audio/);
    },
  );
  const failing = new GoogleEngine({
    synthesizeSpeech: async () => {
      throw new Error("7 PERMISSION_DENIED: credentials missing");
    },
  });
  await failing.synthesize("hi", "ta-IN", "ta-IN-Wavenet-A").then(
    () => assert.unreachable(),
    (error) => {
      assert.instance(error, TtsEngineError);
      assert.is(
        error.message,
        "Google Text-to-Speech failed: 7 PERMISSION_DENIED: credentials missing",
      );
    },
  );
});

test("the client is created lazily, once", async () => {
  let created = 0;
  const { client } = stubClient(() => encodeWav(new Int16Array(8), 8000));
  const engine = new GoogleEngine(async () => {
    created++;
    return client;
  });
  assert.is(created, 0);
  await engine.synthesize("a", "kn-IN", "kn-IN-Wavenet-B");
  await engine.synthesize("b", "kn-IN", "kn-IN-Wavenet-B");
  assert.is(created, 1);
});

test("PBX_TTS_ENGINE selects the engine; unknown values are refused", () => {
  assert.is(ttsEngineFrom({}), "espeak");
  assert.is(ttsEngineFrom({ PBX_TTS_ENGINE: "" }), "espeak");
  assert.is(ttsEngineFrom({ PBX_TTS_ENGINE: "Google" }), "google");
  assert.throws(
    () => ttsEngineFrom({ PBX_TTS_ENGINE: "polly" }),
    (error: Error) =>
      error instanceof TtsEngineError &&
      /Unknown PBX_TTS_ENGINE 'polly' \(expected espeak or google\)/.test(error.message),
  );
  assert.is(createSpeechEngine({ engine: ttsEngineFrom({}) }).name, "espeak (worker)");
  assert.is(createSpeechEngine({ engine: "espeak", worker: false }).name, "espeak");
  assert.is(
    createSpeechEngine({ engine: ttsEngineFrom({ PBX_TTS_ENGINE: "google" }) }).name,
    "google",
  );
});

test.run();
