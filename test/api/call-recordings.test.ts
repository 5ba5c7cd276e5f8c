// `GET /calls/{callId}/recording` over records ingested from the recorded fixtures: the file is
// found through the org's own record (rule 4), streamed whole or by range, `calls.recording` for
// `ak_` keys, and nothing outside the org's folder can be reached.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import { recordedUniqueid } from "../../src/domain/calls/call-recordings.js";
import type { AmiMessage } from "../../src/engine/ami-connection.js";
import { callFixtures, ORG_A, ORG_B, rewriteOrgs } from "../calls/fixture-events.js";
import { expectError, startTestApp, type TestApp } from "./helpers.js";

const test = suite("call recordings API");
const recordings = mkdtempSync(join(tmpdir(), "pbx-recordings-"));
const fixtures = callFixtures();
let app: TestApp;
let tracking: CallTracking;
let acme: { id: string; api_key: string };
let bravo: { id: string; api_key: string };
const key = (org: { api_key: string }) => ({ "x-api-key": org.api_key });
/** What the engine "recorded": distinct bytes per file, so a mix-up shows. */
const AUDIO = "RIFF-fake-wave-0123456789abcdefghijklmnopqrstuvwxyz";

function feed(events: readonly AmiMessage[]) {
  for (const event of events) tracking.feed(event);
  return tracking.idle();
}

function eventsOf(scenario: string): AmiMessage[] {
  return rewriteOrgs(fixtures.get(scenario)!.events, [
    [ORG_A, acme.id],
    [ORG_B, bravo.id],
    ["org_b_", `org_${bravo.id}_`],
  ]);
}

/** The recorded leg of a scenario: [linkedid, uniqueid] of its Cdr naming a recording. */
function recordedLeg(events: readonly AmiMessage[]): [string, string] {
  const cdr = events.find((e) => e.event === "Cdr" && e.recordingfile)!;
  return [String(cdr.linkedid), String(cdr.uniqueid)];
}

test.before(async () => {
  app = await startTestApp({ env: { PBX_RECORDINGS_DIR: recordings } });
  acme = await app.createOrg("Acme");
  bravo = await app.createOrg("Bravo");
  tracking = startCallTracking({ db: app.db, clock: () => app.clock.now });
  await feed(eventsOf("internal")); // acme, recorded
  await feed(eventsOf("missed-inbound")); // bravo, recorded
  for (const [org, scenario] of [
    [acme, "internal"],
    [bravo, "missed-inbound"],
  ] as const) {
    const [, uniqueid] = recordedLeg(eventsOf(scenario));
    mkdirSync(join(recordings, org.id), { recursive: true });
    writeFileSync(join(recordings, org.id, `${uniqueid}.wav`), `${AUDIO}-${org.id}`);
  }
});

test.after(async () => {
  await tracking.stop();
  await app.close();
});

test("the org's recording streams whole by linkedid or uniqueid, with Content-Length", async () => {
  const [linkedid, uniqueid] = recordedLeg(eventsOf("internal"));
  for (const id of [linkedid, uniqueid]) {
    const res = await app.request("GET", `/api/v1/calls/${id}/recording`, { headers: key(acme) });
    assert.is(res.status, 200);
    assert.is(res.text, `${AUDIO}-${acme.id}`);
    assert.is(res.headers.get("content-type"), "audio/wav");
    assert.is(res.headers.get("content-length"), String(`${AUDIO}-${acme.id}`.length));
    assert.is(res.headers.get("accept-ranges"), "bytes");
  }
});

test("Range: 206 with Content-Range, 416 past the end", async () => {
  const [linkedid] = recordedLeg(eventsOf("internal"));
  const path = `/api/v1/calls/${linkedid}/recording`;
  const size = `${AUDIO}-${acme.id}`.length;
  const part = await app.request("GET", path, { headers: { ...key(acme), range: "bytes=4-8" } });
  assert.is(part.status, 206);
  assert.is(part.text, AUDIO.slice(4, 9));
  assert.is(part.headers.get("content-length"), "5");
  assert.is(part.headers.get("content-range"), `bytes 4-8/${size}`);
  const tail = await app.request("GET", path, { headers: { ...key(acme), range: "bytes=-3" } });
  assert.is(tail.status, 206);
  assert.is(tail.text, acme.id.slice(-3));
  const past = await app.request("GET", path, {
    headers: { ...key(acme), range: `bytes=${size}-` },
  });
  expectError(past, 416, "Range not satisfiable");
  assert.is(past.headers.get("content-range"), `bytes */${size}`);
});

test("another org's recording is 404 like an unknown call (rule 4)", async () => {
  const [bravoCall, bravoLeg] = recordedLeg(eventsOf("missed-inbound"));
  for (const id of [bravoCall, bravoLeg, "1.999"]) {
    expectError(
      await app.request("GET", `/api/v1/calls/${id}/recording`, { headers: key(acme) }),
      404,
      "Recording not found",
    );
  }
  const own = await app.request("GET", `/api/v1/calls/${bravoCall}/recording`, {
    headers: key(bravo),
  });
  assert.is(own.status, 200);
  assert.is(own.text, `${AUDIO}-${bravo.id}`);
});

test("a call with no recording, or whose file is gone, is 404", async () => {
  const queue = eventsOf("inbound-ivr-queue"); // acme, recording off on that path
  await feed(queue);
  expectError(
    await app.request("GET", `/api/v1/calls/${queue[0]!.linkedid}/recording`, {
      headers: key(acme),
    }),
    404,
    "Recording not found",
  );
  const busy = eventsOf("outbound-busy"); // acme, recorded, but no file was written
  await feed(busy);
  expectError(
    await app.request("GET", `/api/v1/calls/${recordedLeg(busy)[0]}/recording`, {
      headers: key(acme),
    }),
    404,
    "Recording not found",
  );
});

test("a stored name outside the org's folder is never opened", async () => {
  // A record of acme whose recording name points into bravo's folder and one that climbs out.
  const [, bravoLeg] = recordedLeg(eventsOf("missed-inbound"));
  for (const [n, name] of [
    `${bravo.id}/${bravoLeg}.wav`,
    `${acme.id}/../${bravo.id}/x.wav`,
  ].entries()) {
    const events = eventsOf("internal").map((e) => {
      const copy = { ...e };
      for (const field of ["uniqueid", "linkedid"] as const) {
        if (typeof copy[field] === "string") copy[field] = `9${n}${copy[field]}`;
      }
      if (copy.event === "Cdr" && copy.recordingfile) copy.recordingfile = name;
      return copy;
    });
    await feed(events);
    expectError(
      await app.request("GET", `/api/v1/calls/${recordedLeg(events)[0]}/recording`, {
        headers: key(acme),
      }),
      404,
      "Recording not found",
    );
  }
  assert.is(recordedUniqueid(acme.id, `${acme.id}/../x.wav`), null);
  assert.is(recordedUniqueid(acme.id, `${acme.id}/..wav`), null);
  assert.is(recordedUniqueid(acme.id, `${acme.id}/1795594296.9.wav`), "1795594296.9");
  // A callId with a slash or dots only never reaches a lookup.
  const dots = await app.request("GET", "/api/v1/calls/../recording", { headers: key(acme) });
  assert.ok(dots.status === 404 || dots.status === 400);
});

test("`ak_` keys need calls.recording: 403 naming it, 200 with it", async () => {
  const [linkedid] = recordedLeg(eventsOf("internal"));
  const make = async (permissions: string[]) => {
    const res = await app.request("POST", "/api/v1/api-keys", {
      headers: key(acme),
      body: { name: "rec", permissions },
    });
    assert.is(res.status, 201, res.text);
    return { "x-api-key": res.body.api_key as string };
  };
  expectError(
    await app.request("GET", `/api/v1/calls/${linkedid}/recording`, {
      headers: await make(["calls.read"]),
    }),
    403,
    "API key lacks permission: calls.recording",
  );
  const ok = await app.request("GET", `/api/v1/calls/${linkedid}/recording`, {
    headers: await make(["calls.recording"]),
  });
  assert.is(ok.status, 200);
});

test.run();
