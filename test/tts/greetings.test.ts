import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { InvalidGreetingIdError } from "../../src/tts/errors.js";
import {
  greetingPath,
  greetingPrompt,
  removeGreeting,
  writeGreeting,
} from "../../src/tts/greetings.js";
import { encodeWav } from "../../src/tts/wav.js";

const IVR = "0f8fad5b-d9cb-469f-a165-70867728950e";
let soundsDir = "";

test.before.each(async () => {
  soundsDir = await mkdtemp(join(tmpdir(), "pbx-greetings-"));
});

test.after.each(async () => {
  await rm(soundsDir, { recursive: true, force: true });
});

test("the greeting is greetings/greeting_ivr_<id>.wav, the prompt its name", () => {
  assert.is(greetingPrompt(IVR), `greeting_ivr_${IVR}`);
  assert.is(greetingPath("/s", IVR), `/s/greetings/greeting_ivr_${IVR}.wav`);
});

test("writeGreeting creates the directory, writes the bytes and leaves no temporary file", async () => {
  const wav = encodeWav(Int16Array.from([1, 2, 3]), 8000);
  const path = await writeGreeting(soundsDir, IVR, wav);
  assert.is(path, join(soundsDir, "greetings", `greeting_ivr_${IVR}.wav`));
  assert.equal(new Uint8Array(await readFile(path)), wav);
  assert.equal(await readdir(join(soundsDir, "greetings")), [`greeting_ivr_${IVR}.wav`]);
});

test("regenerating replaces the file; removeGreeting deletes it and reports whether it existed", async () => {
  await writeGreeting(soundsDir, IVR, encodeWav(new Int16Array(1000), 8000));
  const second = encodeWav(Int16Array.from([9]), 8000);
  const path = await writeGreeting(soundsDir, IVR, second);
  assert.equal(new Uint8Array(await readFile(path)), second);
  assert.equal(await readdir(join(soundsDir, "greetings")), [`greeting_ivr_${IVR}.wav`]);
  assert.is(await removeGreeting(soundsDir, IVR), true);
  assert.equal(await readdir(join(soundsDir, "greetings")), []);
  assert.is(await removeGreeting(soundsDir, IVR), false);
});

test("concurrent writes of one greeting end with one whole file", async () => {
  const versions = [1, 2, 3, 4, 5].map((n) => encodeWav(new Int16Array(5000).fill(n), 8000));
  await Promise.all(versions.map((wav) => writeGreeting(soundsDir, IVR, wav)));
  const final = new Uint8Array(await readFile(greetingPath(soundsDir, IVR)));
  assert.ok(versions.some((wav) => Buffer.compare(Buffer.from(wav), Buffer.from(final)) === 0));
  assert.equal(await readdir(join(soundsDir, "greetings")), [`greeting_ivr_${IVR}.wav`]);
});

test("ids that could leave the greetings directory are refused", async () => {
  for (const id of ["../x", "a/b", "", ".hidden", "a\nb"]) {
    assert.throws(
      () => greetingPath(soundsDir, id),
      (e: unknown) => e instanceof InvalidGreetingIdError,
    );
  }
  await writeGreeting(soundsDir, "../../etc", new Uint8Array(4)).then(
    () => assert.unreachable(),
    (error) => assert.instance(error, InvalidGreetingIdError),
  );
});

test.run();
