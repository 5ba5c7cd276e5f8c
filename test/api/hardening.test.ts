// Regression tests of issue 13's defects: what a schema-driven fuzzer found answering 500, letting
// unbounded numbers or malformed text through, or answering differently from SPEC.md.
import { gzipSync } from "node:zlib";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileOrg } from "../../src/compiler/index.js";
import { GREETING_BUSY } from "../../src/domain/media/speech.js";
import { OrgSettings, Queue } from "../../src/model/org-state.js";
import { loadOrgState } from "../../src/store/load-org-state.js";
import type { PcmAudio, SpeechEngine } from "../../src/tts/index.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";
import { fakeSpeechEngine } from "./ivrs-helpers.js";

let app: TestApp;
let orgId: string;
let key: Record<string, string>;
let appEngine: SpeechEngine;
test.before(async () => {
  app = await startTestApp({ env: { PBX_GREETING_MAX_CHARS: "2000" } });
  appEngine = app.pbx.deps.speechEngine as SpeechEngine;
});
// Each test works in an org of its own.
test.before.each(async () => {
  const org = await app.createOrg();
  orgId = org.id;
  key = { "x-api-key": org.api_key };
  app.pbx.deps.speechEngine = appEngine;
});
test.after(async () => app.close());

const settings = async () => (await app.request("GET", "/api/v1/settings", { headers: key })).body;

/** The org's compiled dialplan, failing the test on any compile error. */
async function compiledDialplan(): Promise<string> {
  const { files, diagnostics } = compileOrg(await loadOrgState(app.db, orgId));
  assert.equal(
    diagnostics.filter((d) => d.severity === "error"),
    [],
    "what the API accepted must compile",
  );
  return files.find((f) => f.path.endsWith("extensions.conf"))?.content ?? "";
}

test("a body that does not decode with its Content-Encoding is a 400, an unknown coding a 415", async () => {
  const plain = '{"recording_enabled":false}';
  expectError(
    await app.request("PUT", "/api/v1/settings", {
      headers: { ...key, "content-encoding": "gzip" },
      rawBody: plain,
    }),
    400,
    "Request body could not be decoded with its Content-Encoding",
  );
  for (const coding of ["br2", "gzip, gzip", "x-compress"]) {
    expectError(
      await app.request("PUT", "/api/v1/settings", {
        headers: { ...key, "content-encoding": coding },
        rawBody: plain,
      }),
      415,
      "Unsupported Content-Encoding; accepted: identity, gzip, deflate, br",
    );
  }
  assert.is((await settings()).recording_enabled, true, "nothing was applied");
  const res = await fetch(`${app.url}/api/v1/settings`, {
    method: "PUT",
    headers: { ...key, "content-type": "application/json", "content-encoding": "gzip" },
    body: gzipSync(plain),
  });
  assert.is(res.status, 200, await res.text());
  assert.is((await settings()).recording_enabled, false, "a real gzip body is read");
});

test("integers keep the model's bounds; 1e400 is no number; the maximum compiles", async () => {
  const max = OrgSettings.properties.max_concurrent_calls.maximum as number;
  for (const raw of ["1e400", "-1e400", String(max + 1), "123456789012345678901234567890"]) {
    const res = await app.request("PUT", "/api/v1/settings", {
      headers: key,
      rawBody: `{"max_concurrent_calls":${raw}}`,
    });
    assert.is(res.status, 400, `${raw}: ${res.text}`);
  }
  const ok = await app.request("PUT", "/api/v1/settings", {
    headers: key,
    body: { max_concurrent_calls: max },
  });
  assert.is(ok.status, 200, ok.text);
  assert.is((await settings()).max_concurrent_calls, max);

  const queue = await app.request("POST", "/api/v1/queues", {
    headers: key,
    body: { number: "600", name: "Sales" },
  });
  const huge = await app.request("PUT", `/api/v1/queues/${queue.body.id}`, {
    headers: key,
    rawBody: '{"max_wait":123456789012345678901234567890}',
  });
  assert.is(huge.status, 400, huge.text);
  const longest = Queue.properties.max_wait.maximum as number;
  const kept = await app.request("PUT", `/api/v1/queues/${queue.body.id}`, {
    headers: key,
    body: { max_wait: longest },
  });
  assert.is(kept.status, 200, kept.text);
  const dialplan = await compiledDialplan();
  assert.ok(dialplan.includes(`,${longest})`), "the bound reaches Queue() as a plain integer");
  assert.not.ok(/Infinity|e\+/.test(dialplan));
});

test("a voicemail mailbox the API accepts is one the compiler accepts (one predicate)", async () => {
  const ivr = await app.request("POST", "/api/v1/ivrs", {
    headers: key,
    body: { name: "Main", extension: "500" },
  });
  const mailbox = "1234567890123456789";
  const menu = await app.request("PUT", `/api/v1/ivrs/${ivr.body.id}/menu`, {
    headers: key,
    body: { options: [{ digit: "1", action_type: "voicemail", action_destination: mailbox }] },
  });
  assert.is(menu.status, 200, menu.text);
  assert.ok((await compiledDialplan()).includes(`VoiceMail(${mailbox}@`));
});

test("a body that is not JSON on a JSON operation is a 415 and changes nothing", async () => {
  for (const [type, raw] of [
    ["text/plain", '{"recording_enabled":false}'],
    ["application/x-www-form-urlencoded", "recording_enabled=false"],
    ["application/xml", "<settings><recording_enabled>false</recording_enabled></settings>"],
  ] as const) {
    expectError(
      await app.request("PUT", "/api/v1/settings", {
        headers: { ...key, "content-type": type },
        rawBody: raw,
      }),
      415,
      "Content-Type must be application/json",
    );
  }
  assert.is((await settings()).recording_enabled, true);
  expectError(
    await app.request("POST", "/api/v1/users", {
      headers: { ...key, "content-type": "application/x-www-form-urlencoded" },
      rawBody: "extension=100&name=Ann",
    }),
    415,
    "Content-Type must be application/json",
  );
});

test("a lone UTF-16 surrogate is refused (400), a paired one is stored exactly", async () => {
  expectError(
    await app.request("POST", "/api/v1/users", {
      headers: key,
      rawBody: '{"extension":"100","name":"Ann \\ud800 B"}',
    }),
    400,
    "name must be valid Unicode text (it holds a lone surrogate)",
  );
  const paired = await app.request("POST", "/api/v1/users", {
    headers: key,
    body: { extension: "100", name: "Ann \u{1F600}" },
  });
  assert.is(paired.status, 201, paired.text);
  const read = await app.request("GET", `/api/v1/users/${paired.body.id}`, { headers: key });
  assert.is(read.body.name, "Ann \u{1F600}");
});

test("UUIDs in paths are read case-insensitively", async () => {
  const user = await app.request("POST", "/api/v1/users", {
    headers: key,
    body: { extension: "100", name: "Ann" },
  });
  const upper = String(user.body.id).toUpperCase();
  const read = await app.request("GET", `/api/v1/users/${upper}`, { headers: key });
  assert.is(read.status, 200, read.text);
  assert.is(read.body.id, user.body.id);
  const ivr = await app.request("POST", "/api/v1/ivrs", {
    headers: key,
    body: { name: "Main", extension: "500" },
  });
  const got = await app.request("GET", `/api/v1/ivrs/${String(ivr.body.id).toUpperCase()}`, {
    headers: key,
  });
  assert.is(got.status, 200, got.text);
  // A reference in a body compares the same way, and compiles.
  const sub = await app.request("POST", "/api/v1/ivrs", {
    headers: key,
    body: { name: "Sub", extension: "501" },
  });
  const menu = await app.request("PUT", `/api/v1/ivrs/${sub.body.id}/menu`, {
    headers: key,
    body: {
      options: [
        { digit: "1", action_type: "ivr", action_destination: String(ivr.body.id).toUpperCase() },
      ],
    },
  });
  assert.is(menu.status, 200, menu.text);
  assert.ok((await compiledDialplan()).includes("exten => 1,1,Goto(org_"));
  assert.ok((await compiledDialplan()).includes("_ivr,500,1)"), "digit 1 leads to IVR 500");
});

/** A speech engine whose every chunk waits until the test releases it. */
function gatedEngine() {
  let release: () => void = () => {};
  let gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const started: string[] = [];
  let entered: () => void = () => {};
  const firstCall = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const engine: SpeechEngine = {
    name: "gated",
    async synthesize(text): Promise<PcmAudio> {
      started.push(text);
      entered();
      await gate;
      return { pcm: new Int16Array(800), sampleRate: 8000 };
    },
  };
  return {
    engine,
    started,
    firstCall,
    open() {
      release();
      gate = Promise.resolve();
    },
  };
}

const LONG_TEXT = Array.from(
  { length: 5 },
  (_, i) => `Sentence number ${i} ${"la ".repeat(120)}.`,
).join(" ");

/** The generate-greeting path of a new IVR of the org behind `headers`. */
async function greetingPath(headers: Record<string, string>): Promise<string> {
  const ivr = await app.request("POST", "/api/v1/ivrs", {
    headers,
    body: { name: "Main", extension: "500" },
  });
  assert.is(ivr.status, 201, ivr.text);
  return `/api/v1/ivrs/${ivr.body.id}/generate-greeting`;
}

test("greeting synthesis: one per org at a time (429), another org is not held up", async () => {
  const gated = gatedEngine();
  app.pbx.deps.speechEngine = gated.engine;
  const path = await greetingPath(key);
  const first = app.request("POST", path, { headers: key, body: { text: "Welcome." } });
  await gated.firstCall;
  expectError(
    await app.request("POST", path, { headers: key, body: { text: "Welcome again." } }),
    429,
    GREETING_BUSY,
  );
  const otherKey = { "x-api-key": (await app.createOrg("Other")).api_key };
  const other = app.request("POST", await greetingPath(otherKey), {
    headers: otherKey,
    body: { text: "Hello from another org." },
  });
  gated.open();
  assert.is((await other).status, 200, "another org synthesizes meanwhile");
  assert.is((await first).status, 200);
  const after = await app.request("POST", path, { headers: key, body: { text: "Hello." } });
  assert.is(after.status, 200, "the org may synthesize again once the first finished");
});

test("greeting synthesis stops when the client goes away", async () => {
  const gated = gatedEngine();
  app.pbx.deps.speechEngine = gated.engine;
  const path = await greetingPath(key);
  const client = new AbortController();
  const gone = fetch(app.url + path, {
    method: "POST",
    headers: { ...key, "content-type": "application/json" },
    body: JSON.stringify({ text: LONG_TEXT }),
    signal: client.signal,
  }).catch(() => "aborted");
  await gated.firstCall;
  const before = await app.connections();
  client.abort();
  assert.is(await gone, "aborted");
  // Wait (turn by turn, no timer) until the server has seen the connection close.
  while ((await app.connections()) >= before) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  // The org's slot frees once the abandoned synthesis stops; poll the 429 away, then check
  // that the abandoned text was not synthesized past its first chunk.
  gated.open();
  let next = await app.request("POST", path, { headers: key, body: { text: "Hi." } });
  for (let i = 0; next.status === 429 && i < 100; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    next = await app.request("POST", path, { headers: key, body: { text: "Hi." } });
  }
  assert.is(next.status, 200, next.text);
  assert.is(
    gated.started.filter((text) => text !== "Hi.").length,
    1,
    `only the chunk in progress ran: ${gated.started.length} chunks`,
  );
});

test("PBX_GREETING_MAX_CHARS caps greeting text (400 above it)", async () => {
  app.pbx.deps.speechEngine = fakeSpeechEngine();
  const path = await greetingPath(key);
  expectError(
    await app.request("POST", path, { headers: key, body: { text: `${"a ".repeat(1000)}b` } }),
    400,
    "greeting text must be ≤ 2000 characters",
  );
  const atCap = await app.request("POST", path, {
    headers: key,
    body: { text: "a ".repeat(1000) },
  });
  assert.is(atCap.status, 200, atCap.text);
});

test("SPEC §4.3 form: PATCH and DELETE /queues/{id}/members with the member in the body", async () => {
  await app.request("POST", "/api/v1/users", {
    headers: key,
    body: { extension: "100", name: "Ann" },
  });
  const queue = await app.request("POST", "/api/v1/queues", {
    headers: key,
    body: { number: "600", name: "Sales", members: [{ extension: "100" }] },
  });
  const path = `/api/v1/queues/${queue.body.id}/members`;
  const changed = await app.request("PATCH", path, {
    headers: key,
    body: { extension: "100", penalty: 3, ring_time: 25 },
  });
  assert.is(changed.status, 200, changed.text);
  assert.equal(changed.body.members, [{ extension: "100", penalty: 3, ring_time: 25 }]);
  const removed = await app.request("DELETE", path, { headers: key, body: { extension: "100" } });
  assert.is(removed.status, 204, removed.text);
  const again = await app.request("DELETE", path, { headers: key, body: { extension: "100" } });
  assert.is(again.status, 404, again.text);
  const read = await app.request("GET", `/api/v1/queues/${queue.body.id}`, { headers: key });
  assert.equal(read.body.members, []);
});

test.run();
