// Speech endpoints: /tts/voices, /tts/preview (nothing on disk), generate-greeting (atomic file,
// greeting fields, overwrite, deploy) and greeting-audio (Content-Length, byte ranges). The real
// eSpeak NG engine speaks where the audio itself is checked; a fake engine elsewhere.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseByteRange } from "../../src/domain/routing/ivr-audio-range.js";
import { createSpeechEngine, type SpeechEngine } from "../../src/tts/index.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";
import { fakeSpeechEngine, listFiles, readWavHeader } from "./ivrs-helpers.js";
import { newOrg, type TestOrg } from "./users-helpers.js";

let app: TestApp;
let acme: TestOrg;
let other: TestOrg;
let fake: ReturnType<typeof fakeSpeechEngine>;
let espeak: SpeechEngine;
let appEngine: SpeechEngine | undefined;

test.before(async () => {
  app = await startTestApp();
  appEngine = app.pbx.deps.speechEngine;
  fake = fakeSpeechEngine();
  // In-thread eSpeak NG: the worker variant is the same engine behind a message port.
  espeak = createSpeechEngine({ engine: "espeak", worker: false });
  app.pbx.deps.speechEngine = fake;
  acme = await newOrg(app, "Acme");
  other = await newOrg(app, "Other");
});

test.after(async () => {
  await espeak.close?.();
  await appEngine?.close?.();
  await app.close();
});

function useEngine(engine: SpeechEngine) {
  app.pbx.deps.speechEngine = engine;
}

function soundsDir(): string {
  return app.pbx.deps.config.soundsDir;
}

function greetingFile(id: string): string {
  return join(soundsDir(), "greetings", `greeting_ivr_${id}.wav`);
}

async function newIvr(extension: string, org = acme): Promise<string> {
  const res = await app.request("POST", "/api/v1/ivrs", {
    headers: org.headers,
    body: { name: `IVR ${extension}`, extension },
  });
  assert.is(res.status, 201, res.text);
  return res.body.id as string;
}

async function rawPost(path: string, body: unknown, headers = acme.headers) {
  const res = await fetch(app.url + path, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

async function rawGet(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(app.url + path, { headers: { ...acme.headers, ...headers } });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

function generate(id: string, body: Record<string, unknown>, org = acme) {
  return app.request("POST", `/api/v1/ivrs/${id}/generate-greeting`, {
    headers: org.headers,
    body,
  });
}

function assertTelephonyWav(bytes: Uint8Array): void {
  const header = readWavHeader(bytes);
  assert.is(header.format, 1, "PCM");
  assert.is(header.channels, 1);
  assert.is(header.sampleRate, 8000);
  assert.is(header.bitsPerSample, 16);
  assert.ok(header.dataLengthMatches, "data chunk size matches the file");
  assert.ok(header.dataBytes > 1600, `at least 0.1 s of audio, got ${header.dataBytes} bytes`);
}

test("GET /tts/voices: the 11 language groups, each with voices; 401 without credentials", async () => {
  const res = await app.request("GET", "/api/v1/tts/voices", { headers: acme.headers });
  assert.is(res.status, 200, res.text);
  assert.equal(
    res.body.map((g: { language: string }) => g.language),
    [
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
    ],
  );
  for (const group of res.body) assert.ok(group.voices.length > 0, group.language);
  const enIn = res.body[0];
  assert.is(enIn.defaultVoice, "en-IN-Wavenet-D");
  expectError(await app.request("GET", "/api/v1/tts/voices"), 401, "Authentication required");
});

test("POST /tts/preview speaks 8 kHz 16-bit mono WAV and writes nothing to disk", async () => {
  useEngine(espeak);
  const dataDir = app.config.dataDir;
  const before = listFiles(dataDir);
  const soundsBefore = listFiles(soundsDir());
  const { res, bytes } = await rawPost("/api/v1/tts/preview", {
    text: "Thank you for calling Acme.",
    language: "en-IN",
    voice: "en-IN-Wavenet-D",
  });
  assert.is(res.status, 200);
  assert.is(res.headers.get("content-type"), "audio/wav");
  assert.is(Number(res.headers.get("content-length")), bytes.length);
  assertTelephonyWav(bytes);
  assert.equal(listFiles(dataDir), before);
  assert.equal(listFiles(soundsDir()), soundsBefore);
  useEngine(fake);
});

test("the app's own engine (eSpeak NG in a worker thread) answers a preview", async () => {
  assert.is(appEngine?.name, "espeak (worker)");
  useEngine(appEngine as SpeechEngine);
  const { res, bytes } = await rawPost("/api/v1/tts/preview", {
    text: "Namaste",
    language: "hi-IN",
  });
  assert.is(res.status, 200);
  assertTelephonyWav(bytes);
  useEngine(fake);
});

test("POST /tts/preview: text is required, at most 500 characters, known voices only", async () => {
  for (const body of [{}, { text: "" }, { text: "   " }, { text: null, language: "en-IN" }]) {
    expectError(
      await app.request("POST", "/api/v1/tts/preview", { headers: acme.headers, body }),
      400,
      "text is required",
    );
  }
  expectError(
    await app.request("POST", "/api/v1/tts/preview", {
      headers: acme.headers,
      body: { text: "a".repeat(501) },
    }),
    400,
    "preview text must be ≤ 500 characters",
  );
  const limit = await rawPost("/api/v1/tts/preview", { text: "a".repeat(500) });
  assert.is(limit.res.status, 200);
  const french = await app.request("POST", "/api/v1/tts/preview", {
    headers: acme.headers,
    body: { text: "Bonjour", language: "fr-FR" },
  });
  assert.is(french.status, 400, french.text);
  assert.match(french.body.error, /^Unknown language 'fr-FR'; supported: en-IN, en-US/);
  // Without a language the voice's own group is used.
  fake.calls.length = 0;
  assert.is(
    (await rawPost("/api/v1/tts/preview", { text: "x", voice: "ta-IN-Wavenet-B" })).res.status,
    200,
  );
  assert.equal(fake.calls[0]?.language, "ta-IN");
  expectError(
    await app.request("POST", "/api/v1/tts/preview", { body: { text: "hello" } }),
    401,
    "Authentication required",
  );
});

test("generate-greeting writes greeting_ivr_<id>.wav, sets the greeting fields, schedules a deploy", async () => {
  useEngine(espeak);
  const id = await newIvr("700");
  const mark = app.deploys.length;
  const res = await generate(id, {
    text: "Welcome to Acme. Press 1 for sales.",
    language: "hi-IN",
    voice: "hi-IN-Wavenet-B",
  });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, {
    success: true,
    greeting_prompt: `greeting_ivr_${id}`,
    greeting_language: "hi-IN",
    greeting_voice: "hi-IN-Wavenet-B",
  });
  assert.equal(app.deploys.slice(mark), [acme.id]);
  const first = readFileSync(greetingFile(id));
  assertTelephonyWav(first);
  // No temporary file is left beside it.
  assert.equal(listFiles(join(soundsDir(), "greetings")), [`greeting_ivr_${id}.wav`]);
  const ivr = await app.request("GET", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  assert.is(ivr.body.greeting_prompt, `greeting_ivr_${id}`);
  assert.is(ivr.body.greeting_language, "hi-IN");
  assert.is(ivr.body.greeting_voice, "hi-IN-Wavenet-B");

  // Regenerating overwrites the file and the fields.
  const again = await generate(id, { text: "Goodbye for now.", language: "en-GB" });
  assert.is(again.status, 200, again.text);
  assert.is(again.body.greeting_voice, "en-GB-Wavenet-A");
  const second = readFileSync(greetingFile(id));
  assertTelephonyWav(second);
  assert.not.equal(new Uint8Array(second), new Uint8Array(first));
  assert.equal(listFiles(join(soundsDir(), "greetings")), [`greeting_ivr_${id}.wav`]);
  useEngine(fake);
});

test("generate-greeting: text is required, no length cap, the IVR's voice by default", async () => {
  const id = await newIvr("701");
  for (const body of [{}, { text: "" }, { text: " \n " }]) {
    expectError(await generate(id, body), 400, "text is required");
  }
  const updated = await app.request("PUT", `/api/v1/ivrs/${id}`, {
    headers: acme.headers,
    body: { greeting_language: "kn-IN", greeting_voice: "kn-IN-Wavenet-B" },
  });
  assert.is(updated.status, 200, updated.text);
  fake.calls.length = 0;
  const long = "This sentence is part of a long greeting. ".repeat(60);
  assert.ok(long.length > 2000);
  const res = await generate(id, { text: long });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.greeting_voice, "kn-IN-Wavenet-B");
  assert.ok(fake.calls.length > 1, "spoken in several chunks");
  assert.ok(fake.calls.every((c) => c.language === "kn-IN" && c.voice === "kn-IN-Wavenet-B"));
  assertTelephonyWav(readFileSync(greetingFile(id)));
  expectError(
    await generate(id, { text: "hello", voice: "nobody" }),
    400,
    "Unknown voice 'nobody' for language en-IN; available: en-IN-Wavenet-A, en-IN-Wavenet-B, en-IN-Wavenet-C, en-IN-Wavenet-D",
  );
});

test("greeting-audio streams the file with Content-Length and answers byte ranges", async () => {
  const id = await newIvr("702");
  expectError(
    await app.request("GET", `/api/v1/ivrs/${id}/greeting-audio`, { headers: acme.headers }),
    404,
    "Greeting not generated yet",
  );
  assert.is((await generate(id, { text: "Hello there" })).status, 200);
  const file = new Uint8Array(readFileSync(greetingFile(id)));

  const whole = await rawGet(`/api/v1/ivrs/${id}/greeting-audio`);
  assert.is(whole.res.status, 200);
  assert.is(whole.res.headers.get("content-type"), "audio/wav");
  assert.is(whole.res.headers.get("content-length"), String(file.length));
  assert.is(whole.res.headers.get("accept-ranges"), "bytes");
  assert.equal(whole.bytes, file);

  const head = await rawGet(`/api/v1/ivrs/${id}/greeting-audio`, { range: "bytes=0-43" });
  assert.is(head.res.status, 206);
  assert.is(head.res.headers.get("content-range"), `bytes 0-43/${file.length}`);
  assert.is(head.res.headers.get("content-length"), "44");
  assert.equal(head.bytes, file.subarray(0, 44));

  const tail = await rawGet(`/api/v1/ivrs/${id}/greeting-audio`, { range: "bytes=-10" });
  assert.is(tail.res.status, 206);
  assert.is(
    tail.res.headers.get("content-range"),
    `bytes ${file.length - 10}-${file.length - 1}/${file.length}`,
  );
  assert.equal(tail.bytes, file.subarray(file.length - 10));

  const open = await rawGet(`/api/v1/ivrs/${id}/greeting-audio`, { range: "bytes=100-" });
  assert.is(open.res.status, 206);
  assert.equal(open.bytes, file.subarray(100));

  const beyond = await rawGet(`/api/v1/ivrs/${id}/greeting-audio`, {
    range: `bytes=${file.length}-`,
  });
  assert.is(beyond.res.status, 416);
  assert.is(beyond.res.headers.get("content-range"), `bytes */${file.length}`);

  // Another org: 404 IVR not found, no audio.
  const stolen = await fetch(`${app.url}/api/v1/ivrs/${id}/greeting-audio`, {
    headers: other.headers,
  });
  assert.is(stolen.status, 404);
  assert.equal(await stolen.json(), { error: "IVR not found" });
});

test("another org cannot generate a greeting: 404 and no file", async () => {
  const id = await newIvr("703");
  expectError(await generate(id, { text: "hijack" }, other), 404, "IVR not found");
  assert.equal(
    listFiles(join(soundsDir(), "greetings")).filter((f) => f.includes(id)),
    [],
  );
});

test("DELETE /ivrs/{id} removes the greeting file", async () => {
  const id = await newIvr("704");
  assert.is((await generate(id, { text: "Soon gone" })).status, 200);
  assert.ok(listFiles(soundsDir()).includes(join("greetings", `greeting_ivr_${id}.wav`)));
  const res = await app.request("DELETE", `/api/v1/ivrs/${id}`, { headers: acme.headers });
  assert.is(res.status, 204, res.text);
  assert.not.ok(listFiles(soundsDir()).includes(join("greetings", `greeting_ivr_${id}.wav`)));
});

test("parseByteRange: single ranges, suffixes, open ends, unsatisfiable and ignored forms", () => {
  assert.equal(parseByteRange(undefined, 100), { kind: "full" });
  assert.equal(parseByteRange("bytes=0-9", 100), { kind: "partial", start: 0, end: 9 });
  assert.equal(parseByteRange("bytes=90-200", 100), { kind: "partial", start: 90, end: 99 });
  assert.equal(parseByteRange("bytes=95-", 100), { kind: "partial", start: 95, end: 99 });
  assert.equal(parseByteRange("bytes=-5", 100), { kind: "partial", start: 95, end: 99 });
  assert.equal(parseByteRange("bytes=-500", 100), { kind: "partial", start: 0, end: 99 });
  assert.equal(parseByteRange("bytes=100-", 100), { kind: "unsatisfiable" });
  assert.equal(parseByteRange("bytes=-0", 100), { kind: "unsatisfiable" });
  assert.equal(parseByteRange("bytes=0-1,5-6", 100), { kind: "full" });
  assert.equal(parseByteRange("items=0-1", 100), { kind: "full" });
  assert.equal(parseByteRange("bytes=9-2", 100), { kind: "full" });
});

test.run();
