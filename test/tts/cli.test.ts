import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import TtsSay, { type SayResult } from "../../src/cli/commands/tts/say.js";
import TtsVoices from "../../src/cli/commands/tts/voices.js";
import type { LanguageGroup } from "../../src/tts/voices.js";
import { runCommand } from "../cli/run-command.js";
import { assertTelephonyWav, nonSilentSamples } from "./audio-helpers.js";

let dir = "";
test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), "pbx-tts-cli-"));
});
test.after.each(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("tts say writes an 8 kHz WAV and reports it", async () => {
  const out = join(dir, "hello.wav");
  const run = await runCommand(TtsSay, [
    "नमस्ते, स्वागत है।",
    "--language",
    "hi-IN",
    "--voice",
    "hi-IN-Wavenet-A",
    "--out",
    out,
    "--engine",
    "espeak",
  ]);
  assert.is(run.code, 0, run.stderr);
  const pcm = assertTelephonyWav(new Uint8Array(await readFile(out)));
  assert.ok(nonSilentSamples(pcm) > 0.5 * 8000);
  assert.match(
    run.stdout,
    /^Wrote .*hello\.wav: [\d.]+ s, 8 kHz 16-bit mono, hi-IN-Wavenet-A \(espeak\)/,
  );
  assert.is((run.result as SayResult | undefined)?.voice, "hi-IN-Wavenet-A");
  assert.is(
    (run.result as SayResult | undefined)?.durationSeconds,
    Math.round((pcm.length / 8000) * 100) / 100,
  );
});

test("tts say --json prints the result; bad input is one line, not a stack trace", async () => {
  const out = join(dir, "a.wav");
  const ok = await runCommand(TtsSay, ["Hello", "--out", out, "--json", "--engine", "espeak"]);
  assert.is(ok.code, 0, ok.stderr);
  const printed = JSON.parse(ok.stdout) as SayResult;
  assert.equal(
    [printed.language, printed.voice, printed.sampleRate],
    ["en-IN", "en-IN-Wavenet-D", 8000],
  );

  const badVoice = await runCommand(TtsSay, [
    "Hi",
    "-l",
    "ta-IN",
    "--voice",
    "x",
    "-o",
    out,
    "--engine",
    "espeak",
  ]);
  assert.is(badVoice.code, 1);
  assert.match(
    badVoice.error?.message ?? "",
    /^Unknown voice 'x' for language ta-IN; available: ta-IN-Wavenet-A/,
  );
  assert.not.match(badVoice.stderr, /\n\s+at /);

  const badLanguage = await runCommand(TtsSay, ["Hi", "-l", "fr-FR", "-o", out]);
  assert.is(badLanguage.code, 2, "a flag value outside the list is a usage error");
});

test("tts voices lists the 11 groups; --json returns the catalogue", async () => {
  const human = await runCommand(TtsVoices, []);
  assert.is(human.code, 0);
  assert.match(human.stdout, /^en-IN {2}English \(India\) {2}\(espeak: en-gb\)/);
  assert.match(human.stdout, /en-IN-Wavenet-D\s+female\s+en-gb\+f2\s+default/);
  const json = await runCommand(TtsVoices, ["--json"]);
  const groups = JSON.parse(json.stdout) as LanguageGroup[];
  assert.is(groups.length, 11);
  assert.ok(groups.every((g) => g.voices.length > 0));
});

test.run();
