import { Value } from "@sinclair/typebox/value";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { UnknownLanguageError, UnknownVoiceError } from "../../src/tts/errors.js";
import { resolveVoice, VOICE_CATALOGUE, VoiceCatalogueSchema } from "../../src/tts/voices.js";

const SPEC_LANGUAGES = [
  "en-IN",
  "en-US",
  "en-GB",
  "hi-IN",
  "ta-IN",
  "te-IN",
  "kn-IN",
  "ml-IN",
  "mr-IN",
  "gu-IN",
  "bn-IN",
];

test("the catalogue has the 11 SPEC language groups in order, each with voices", () => {
  assert.equal(
    VOICE_CATALOGUE.map((g) => g.language),
    SPEC_LANGUAGES,
  );
  for (const group of VOICE_CATALOGUE) {
    assert.ok(group.voices.length > 0, group.language);
    assert.ok(
      group.voices.some((v) => v.name === group.defaultVoice),
      `${group.language} default voice is listed`,
    );
    for (const voice of group.voices) {
      assert.ok(voice.name.startsWith(`${group.language}-`), voice.name);
      assert.ok(voice.espeak.startsWith(group.espeakVoice), voice.espeak);
    }
  }
  assert.ok(Value.Check(VoiceCatalogueSchema, VOICE_CATALOGUE), "matches its published schema");
});

test("voices of a group differ from each other, and genders pick matching eSpeak variants", () => {
  for (const group of VOICE_CATALOGUE) {
    const variants = group.voices.map((v) => v.espeak);
    assert.is(new Set(variants).size, variants.length, `${group.language}: ${variants}`);
    for (const voice of group.voices) {
      const variant = voice.espeak.split("+")[1] ?? "";
      if (voice.gender === "female") assert.match(variant, /^f\d$/);
      else assert.match(variant, /^(m\d)?$/);
    }
  }
  const hindi = VOICE_CATALOGUE.find((g) => g.language === "hi-IN")!;
  assert.equal(
    hindi.voices.map((v) => [v.name, v.gender]),
    [
      ["hi-IN-Wavenet-A", "female"],
      ["hi-IN-Wavenet-B", "male"],
      ["hi-IN-Wavenet-C", "male"],
      ["hi-IN-Wavenet-D", "female"],
    ],
  );
});

test("en-IN falls back to British English in eSpeak NG, and says so", () => {
  const english = VOICE_CATALOGUE.find((g) => g.language === "en-IN")!;
  assert.is(english.espeakVoice, "en-gb");
  assert.match(english.espeakFallback ?? "", /no Indian English voice/);
  assert.is(english.defaultVoice, "en-IN-Wavenet-D");
  const withFallback = VOICE_CATALOGUE.filter((g) => g.espeakFallback).map((g) => g.language);
  assert.equal(withFallback, ["en-IN"]);
});

test("resolveVoice picks the default voice, ignores case, and names the valid choices", () => {
  assert.is(resolveVoice("en-IN").voice.name, "en-IN-Wavenet-D");
  assert.is(resolveVoice("hi-in", "HI-IN-WAVENET-b").voice.espeak, "hi");
  assert.is(resolveVoice("hi-IN", "hi-IN-Wavenet-C").voice.espeak, "hi+m3");
  assert.is(resolveVoice("ta-IN", "").voice.name, "ta-IN-Wavenet-A");
  try {
    resolveVoice("fr-FR");
    assert.unreachable();
  } catch (error) {
    assert.instance(error, UnknownLanguageError);
    assert.match((error as Error).message, /^Unknown language 'fr-FR'; supported: en-IN, en-US/);
  }
  try {
    resolveVoice("hi-IN", "en-IN-Wavenet-A");
    assert.unreachable();
  } catch (error) {
    assert.instance(error, UnknownVoiceError);
    assert.is(
      (error as Error).message,
      "Unknown voice 'en-IN-Wavenet-A' for language hi-IN; available: hi-IN-Wavenet-A, hi-IN-Wavenet-B, hi-IN-Wavenet-C, hi-IN-Wavenet-D",
    );
  }
});

test.run();
