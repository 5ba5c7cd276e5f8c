// The embedded engine for real: eSpeak NG in WebAssembly, every language group, 8 kHz WAV out.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  PreviewTextTooLongError,
  TextRequiredError,
  UnknownLanguageError,
} from "../../src/tts/errors.js";
import { EspeakEngine } from "../../src/tts/espeak-engine.js";
import { greetingWav, previewWav, synthesizeLong } from "../../src/tts/synthesize.js";
import { VOICE_CATALOGUE } from "../../src/tts/voices.js";
import { assertTelephonyWav, nonSilentSamples } from "./audio-helpers.js";

// One greeting-like sentence per group, in its own script.
const SENTENCES: Record<string, string> = {
  "en-IN": "Thank you for calling. Please press one for sales.",
  "en-US": "Thank you for calling. Please press one for sales.",
  "en-GB": "Thank you for calling. Please press one for sales.",
  "hi-IN": "नमस्ते, कॉल करने के लिए धन्यवाद। बिक्री के लिए एक दबाएँ।",
  "ta-IN": "வணக்கம், அழைத்ததற்கு நன்றி. விற்பனைக்கு ஒன்றை அழுத்தவும்.",
  "te-IN": "నమస్కారం, కాల్ చేసినందుకు ధన్యవాదాలు. అమ్మకాల కోసం ఒకటి నొక్కండి.",
  "kn-IN": "ನಮಸ್ಕಾರ, ಕರೆ ಮಾಡಿದ್ದಕ್ಕಾಗಿ ಧನ್ಯವಾದಗಳು. ಮಾರಾಟಕ್ಕಾಗಿ ಒಂದನ್ನು ಒತ್ತಿರಿ.",
  "ml-IN": "നമസ്കാരം, വിളിച്ചതിന് നന്ദി. വിൽപ്പനയ്ക്കായി ഒന്ന് അമർത്തുക.",
  "mr-IN": "नमस्कार, कॉल केल्याबद्दल धन्यवाद. विक्रीसाठी एक दाबा.",
  "gu-IN": "નમસ્તે, કૉલ કરવા બદલ આભાર. વેચાણ માટે એક દબાવો.",
  "bn-IN": "নমস্কার, কল করার জন্য ধন্যবাদ। বিক্রয়ের জন্য এক টিপুন।",
};

const engine = new EspeakEngine();

test.before(async () => {
  await engine.warm();
});

for (const group of VOICE_CATALOGUE) {
  test(`speaks ${group.language} into an 8 kHz 16-bit mono WAV of plausible length`, async () => {
    const text = SENTENCES[group.language];
    assert.ok(text, `a sentence for ${group.language}`);
    const wav = await previewWav(engine, { text, language: group.language });
    const pcm = assertTelephonyWav(wav);
    const seconds = pcm.length / 8000;
    assert.ok(seconds > 1.5 && seconds < 12, `${group.language}: ${seconds} s`);
    // Speech, not a click or silence: at least ~0.8 s of clearly audible samples.
    const loud = nonSilentSamples(pcm);
    assert.ok(loud > 0.8 * 8000, `${group.language}: ${loud} audible samples`);
  });
}

test("each voice of a group sounds different (its own eSpeak variant)", async () => {
  const text = "Press one for sales.";
  const female = await engine.synthesize(text, "hi-IN", "hi-IN-Wavenet-A");
  const male = await engine.synthesize(text, "hi-IN", "hi-IN-Wavenet-B");
  const male2 = await engine.synthesize(text, "hi-IN", "hi-IN-Wavenet-C");
  assert.is(female.sampleRate, 22050);
  const same = (a: Int16Array, b: Int16Array) =>
    a.length === b.length && a.every((value, i) => value === b[i]);
  assert.not.ok(same(female.pcm, male.pcm));
  assert.not.ok(same(male.pcm, male2.pcm));
});

test("the warm instance starts every run afresh: same input, same samples", async () => {
  const first = await engine.synthesize(
    "Your call is important to us.",
    "en-US",
    "en-US-Wavenet-C",
  );
  await engine.synthesize("Something else entirely, in between.", "ta-IN", "ta-IN-Wavenet-B");
  const again = await engine.synthesize(
    "Your call is important to us.",
    "en-US",
    "en-US-Wavenet-C",
  );
  assert.is(again.pcm.length, first.pcm.length);
  assert.ok(again.pcm.every((value, i) => value === first.pcm[i]));
});

test("the same text and voice give the same samples in any second (no wall-clock seed)", async () => {
  // eSpeak NG seeds its voice variation from time(); the runtime pins the instance's wall clock.
  const realNow = Date.now;
  const spoken = async (at: number) => {
    Date.now = () => at;
    try {
      return await engine.synthesize("Thank you for calling.", "en-US", "en-US-Wavenet-C");
    } finally {
      Date.now = realNow;
    }
  };
  const first = await spoken(1_800_000_000_000);
  const later = await spoken(1_800_000_007_000);
  assert.is(later.pcm.length, first.pcm.length);
  assert.ok(later.pcm.every((value, i) => value === first.pcm[i]));
});

test("text that looks like an option is spoken, not parsed", async () => {
  const audio = await synthesizeLong(engine, "-w /etc/passwd --help", "en-US");
  assert.ok(nonSilentSamples(audio.pcm) > 0.5 * 8000);
});

test("preview: text is required, at most 500 characters, and nothing is written to disk", async () => {
  const dir = await mkdtemp(join(tmpdir(), "pbx-tts-preview-"));
  const cwd = process.cwd();
  try {
    process.chdir(dir);
    const wav = await previewWav(engine, { text: "Hello.", language: "en-GB" });
    assertTelephonyWav(wav);
    assert.equal(await readdir(dir), []);
  } finally {
    process.chdir(cwd);
    await rm(dir, { recursive: true, force: true });
  }
  for (const text of [undefined, null, "", "   "]) {
    await previewWav(engine, { text, language: "en-IN" }).then(
      () => assert.unreachable(),
      (error) => {
        assert.instance(error, TextRequiredError);
        assert.is(error.message, "text is required");
      },
    );
  }
  await previewWav(engine, { text: "a".repeat(501) }).then(
    () => assert.unreachable(),
    (error) => {
      assert.instance(error, PreviewTextTooLongError);
      assert.is(error.message, "preview text must be ≤ 500 characters");
    },
  );
  await previewWav(engine, { text: "hello", language: "xx-XX" }).then(
    () => assert.unreachable(),
    (error) => assert.instance(error, UnknownLanguageError),
  );
});

test("greeting: defaults to en-IN / en-IN-Wavenet-D, or to the voice's own language", async () => {
  const plain = await greetingWav(engine, { text: "Welcome." });
  assert.equal([plain.language, plain.voice], ["en-IN", "en-IN-Wavenet-D"]);
  assertTelephonyWav(plain.wav);
  const byVoice = await greetingWav(engine, { text: "स्वागत है।", voice: "hi-IN-Wavenet-B" });
  assert.equal([byVoice.language, byVoice.voice], ["hi-IN", "hi-IN-Wavenet-B"]);
});

test.run();
