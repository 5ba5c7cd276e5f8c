import { test } from "uvu";
import * as assert from "uvu/assert";
import { splitIntoChunks } from "../../src/tts/chunk-text.js";

const words = (text: string) => text.split(/\s+/).filter(Boolean);

test("short text is one chunk; blank text is none", () => {
  assert.equal(splitIntoChunks("  Hello there.  "), ["Hello there."]);
  assert.equal(splitIntoChunks(" \n\t "), []);
});

test("sentences are packed into chunks up to the limit, never cut inside", () => {
  const text = "One two three. Four five six! Seven eight nine? Ten eleven twelve.";
  const chunks = splitIntoChunks(text, 30);
  for (const chunk of chunks) assert.ok(chunk.length <= 30, chunk);
  assert.equal(chunks, [
    "One two three. Four five six!",
    "Seven eight nine?",
    "Ten eleven twelve.",
  ]);
  assert.equal(words(chunks.join(" ")), words(text));
});

test("the danda ends a sentence too", () => {
  const text = "नमस्ते। कॉल करने के लिए धन्यवाद। कृपया प्रतीक्षा करें।";
  const chunks = splitIntoChunks(text, 25);
  assert.equal(chunks, ["नमस्ते।", "कॉल करने के लिए धन्यवाद।", "कृपया प्रतीक्षा करें।"]);
  assert.equal(words(chunks.join(" ")), words(text));
});

test("a long sentence splits at clauses, then words, then inside an over-long word", () => {
  const clauses = "first clause here, second clause here; third clause here";
  assert.equal(splitIntoChunks(clauses, 20), [
    "first clause here,",
    "second clause here;",
    "third clause here",
  ]);
  const long = `call ${"9".repeat(25)} now`;
  const chunks = splitIntoChunks(long, 10);
  assert.ok(
    chunks.every((c) => c.length <= 10),
    chunks.join(" | "),
  );
  assert.is(chunks.join(" ").replace(/ /g, ""), long.replace(/ /g, ""));
});

test.run();
