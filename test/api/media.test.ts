// Greeting and music-on-hold files: WAV uploads in several encodings converted to 8 kHz 16-bit
// mono, stored under <sounds>/custom/<org>/ and <sounds>/moh/<org>/, listed, downloaded and
// deleted; names validated so nothing escapes the directory; each org sees only its own files.
// A music-on-hold upload or delete deploys the org (its music class lists the files).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import wavefilePackage from "wavefile";
import { encodeWav, parseWav } from "../../src/tts/wav.js";
import { orgKey, type TestOrg } from "./dids-fixtures.js";
import { expectError, startTestApp, type TestApp, type TestResponse } from "./helpers.js";

const { WaveFile } = wavefilePackage;

let app: TestApp;
let acme: TestOrg;
let beta: TestOrg;
let sounds: string;

test.before(async () => {
  app = await startTestApp();
  acme = await app.createOrg("Acme");
  beta = await app.createOrg("Beta");
  sounds = app.pbx.deps.config.soundsDir;
});
test.after(async () => app.close());

/** One second of a 440 Hz tone at `rate`, as 16-bit samples. */
function tone(rate: number, seconds = 1): Int16Array {
  const pcm = new Int16Array(Math.round(rate * seconds));
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate));
  return pcm;
}

function stereo44k(): Uint8Array {
  const left = tone(44100);
  const wav = new WaveFile();
  wav.fromScratch(2, 44100, "16", [Array.from(left), Array.from(left)]);
  return wav.toBuffer();
}

function muLaw16k(): Uint8Array {
  const wav = new WaveFile();
  wav.fromScratch(1, 16000, "16", Array.from(tone(16000)));
  wav.toMuLaw();
  return wav.toBuffer();
}

function eightBit22k(): Uint8Array {
  const wav = new WaveFile();
  wav.fromScratch(1, 22050, "16", Array.from(tone(22050)));
  wav.toBitDepth("8");
  return wav.toBuffer();
}

async function upload(
  org: TestOrg,
  path: string,
  bytes: Uint8Array,
  contentType = "audio/wav",
): Promise<TestResponse> {
  const res = await fetch(`${app.url}/api/v1${path}`, {
    method: "POST",
    headers: { ...orgKey(org), "content-type": contentType },
    body: bytes,
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body, text };
}

function assertTelephonyWav(file: string, seconds: number): void {
  const wav = parseWav(readFileSync(file));
  assert.equal(
    [wav.audioFormat, wav.channels, wav.sampleRate, wav.bitsPerSample],
    [1, 1, 8000, 16],
    "8 kHz 16-bit mono PCM",
  );
  assert.ok(Math.abs(wav.pcm.length - 8000 * seconds) <= 8, `${wav.pcm.length} samples`);
}

test("a 44.1 kHz stereo greeting is stored as 8 kHz 16-bit mono under custom/<org>/", async () => {
  app.deploys.length = 0;
  const res = await upload(acme, "/greetings?name=welcome", stereo44k());
  assert.is(res.status, 201, res.text);
  assert.is(res.body.name, "welcome");
  assert.is(res.body.sound, `custom/${acme.id}/welcome`);
  assert.is(res.body.sample_rate, 8000);
  assert.is(res.body.duration_seconds, 1);
  const file = join(sounds, "custom", acme.id, "welcome.wav");
  assertTelephonyWav(file, 1);
  assert.is(res.body.size, readFileSync(file).length);
  assert.equal(app.deploys, [], "sound files are not configuration");
});

test("mu-law and 8-bit WAVs are converted too; without a name the server picks one", async () => {
  const mu = await upload(acme, "/greetings", muLaw16k());
  assert.is(mu.status, 201, mu.text);
  assert.match(mu.body.name, /^greeting_[0-9a-f]{12}$/);
  assertTelephonyWav(join(sounds, "custom", acme.id, `${mu.body.name}.wav`), 1);
  assert.equal(app.deploys, [], "greetings are played by name: no deploy");
  const eight = await upload(acme, "/music-on-hold?name=jazz-1", eightBit22k(), "audio/x-wav");
  assert.is(eight.status, 201, eight.text);
  assert.is(eight.body.sound, `moh/${acme.id}/jazz-1`);
  assertTelephonyWav(join(sounds, "moh", acme.id, "jazz-1.wav"), 1);
  assert.equal(app.deploys, [acme.id], "the org's music class lists its files: deploy the org");
});

test("re-uploading a name replaces the file", async () => {
  const res = await upload(acme, "/greetings?name=welcome", encodeWav(tone(8000, 2), 8000));
  assert.is(res.status, 201, res.text);
  assert.is(res.body.duration_seconds, 2);
  const list = await app.request("GET", "/api/v1/greetings", { headers: orgKey(acme) });
  assert.is(list.body.data.filter((f: { name: string }) => f.name === "welcome").length, 1);
});

test("list, download, delete", async () => {
  const list = await app.request("GET", "/api/v1/greetings", { headers: orgKey(acme) });
  assert.is(list.status, 200);
  assert.ok(list.body.data.some((f: { name: string }) => f.name === "welcome"));
  const download = await fetch(`${app.url}/api/v1/greetings/welcome`, { headers: orgKey(acme) });
  assert.is(download.status, 200);
  assert.is(download.headers.get("content-type"), "audio/wav");
  const bytes = new Uint8Array(await download.arrayBuffer());
  assert.equal(bytes, new Uint8Array(readFileSync(join(sounds, "custom", acme.id, "welcome.wav"))));
  const moh = await app.request("GET", "/api/v1/music-on-hold", { headers: orgKey(acme) });
  assert.equal(
    moh.body.data.map((f: { name: string }) => f.name),
    ["jazz-1"],
  );
  const mark = app.deploys.length;
  const deleted = await app.request("DELETE", "/api/v1/music-on-hold/jazz-1", {
    headers: orgKey(acme),
  });
  assert.is(deleted.status, 204);
  assert.not.ok(existsSync(join(sounds, "moh", acme.id, "jazz-1.wav")));
  assert.equal(app.deploys.slice(mark), [acme.id], "a deleted music file deploys the org");
  expectError(
    await app.request("DELETE", "/api/v1/music-on-hold/jazz-1", { headers: orgKey(acme) }),
    404,
    "Music on hold file not found",
  );
  assert.equal(app.deploys.slice(mark), [acme.id], "a refused delete deploys nothing");
});

test("bad uploads: not a WAV (400), wrong content type (415), bad names (400)", async () => {
  expectError(
    await upload(acme, "/greetings?name=junk", new TextEncoder().encode("not audio at all")),
    400,
    "Upload a WAV file: audio is not a RIFF/WAVE file",
  );
  expectError(
    await upload(acme, "/greetings?name=junk", stereo44k(), "text/plain"),
    415,
    "Unsupported media type",
  );
  for (const name of ["../escape", "Welcome", "a.wav", "x".repeat(65), "a b"]) {
    const res = await upload(acme, `/greetings?name=${encodeURIComponent(name)}`, stereo44k());
    assert.is(res.status, 400, `${name}: ${res.text}`);
  }
  assert.not.ok(existsSync(join(sounds, "custom", "escape.wav")));
  assert.not.ok(existsSync(join(sounds, "custom", acme.id, "junk.wav")));
});

test("nothing in a path can reach a file outside the org's directory", async () => {
  const outside = join(sounds, "custom", "precious.wav");
  mkdirSync(join(sounds, "custom"), { recursive: true });
  writeFileSync(outside, "keep me");
  for (const name of ["..%2Fprecious", "..%2F..%2Fcustom%2Fprecious", "%2e%2e"]) {
    const del = await app.request("DELETE", `/api/v1/greetings/${name}`, {
      headers: orgKey(acme),
    });
    assert.ok([400, 404].includes(del.status), `${name}: ${del.status}`);
    const get = await app.request("GET", `/api/v1/greetings/${name}`, { headers: orgKey(acme) });
    assert.ok([400, 404].includes(get.status), `${name}: ${get.status}`);
  }
  assert.is(readFileSync(outside, "utf8"), "keep me");
});

test("tenant isolation: another org neither lists, reads nor deletes the files", async () => {
  const list = await app.request("GET", "/api/v1/greetings", { headers: orgKey(beta) });
  assert.equal(list.body.data, []);
  expectError(
    await app.request("GET", "/api/v1/greetings/welcome", { headers: orgKey(beta) }),
    404,
    "Greeting not found",
  );
  expectError(
    await app.request("DELETE", "/api/v1/greetings/welcome", { headers: orgKey(beta) }),
    404,
    "Greeting not found",
  );
  assert.ok(existsSync(join(sounds, "custom", acme.id, "welcome.wav")));
  const own = await upload(beta, "/greetings?name=welcome", stereo44k());
  assert.is(own.body.sound, `custom/${beta.id}/welcome`, "same name, own directory");
  expectError(await app.request("GET", "/api/v1/greetings"), 401, "Authentication required");
});

test.run();
