// `pbxctl calls list` and `pbxctl calls tail` over a store filled from the recorded engine
// event sequences (fixtures/calls): the org's history with the API's filters, and its call
// events printed, then followed as new ones are stored.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CallTracking, startCallTracking } from "../../src/api/call-tracking.js";
import CallsList, { type CallsListResult } from "../../src/cli/commands/calls/list.js";
import CallsTail from "../../src/cli/commands/calls/tail.js";
import { type TailedCallEvent, tailCallEvents } from "../../src/domain/calls/call-tail.js";
import { openDataStore } from "../../src/domain/config/gitops.js";
import type { Db } from "../../src/store/database.js";
import { callFixtures, ORG_A, ORG_B } from "../calls/fixture-events.js";
import { insertOrg } from "../store/helpers.js";
import { runCommand } from "./run-command.js";
import { storePerTest } from "./test-store.js";

const test = suite("pbxctl calls");
storePerTest(test, "suite");
const fixtures = callFixtures();
const dir = mkdtempSync(join(tmpdir(), "pbx-calls-cli-"));
let db: Db;
let tracking: CallTracking;

async function replay(scenario: string) {
  for (const event of fixtures.get(scenario)!.events) tracking.feed(event);
  await tracking.idle();
}

test.before(async () => {
  db = (await openDataStore(process.env, dir, { create: true })).db;
  for (const org of fixtures.get("missed-inbound")!.orgs) {
    await insertOrg(db, org.id, org.id, org.context_prefix);
  }
  tracking = startCallTracking({ db, clock: () => new Date("2026-11-25T08:00:00Z") });
  for (const scenario of ["inbound-ivr-queue", "missed-inbound", "outbound-busy"]) {
    await replay(scenario);
  }
});

test.after(async () => {
  await tracking.stop();
  await db.destroy();
});

test("calls list: the org's history, filters, --json", async () => {
  const all = await runCommand(CallsList, ["--org", ORG_A, "--data-dir", dir, "--json"]);
  assert.is(all.code, 0, all.stderr);
  const result = JSON.parse(all.stdout) as CallsListResult;
  assert.is(result.total, 2);
  assert.equal(result.calls.map((c) => c.direction).sort(), ["inbound", "outbound"]);
  const inbound = await runCommand(CallsList, [
    "--org",
    ORG_A,
    "--data-dir",
    dir,
    "--direction",
    "inbound",
    "--json",
  ]);
  assert.equal(
    (JSON.parse(inbound.stdout) as CallsListResult).calls.map((c) => c.dst),
    ["600"],
  );
  const text = await runCommand(CallsList, ["--org", ORG_B, "--data-dir", dir]);
  assert.is(text.code, 0);
  assert.is(text.stdout.trim().split("\n").length, 1);
  assert.match(text.stdout, /inbound\s+FAILED/);
  assert.match(text.stderr, /1 of 1 calls/);
});

test("calls list and tail over a store no engine ever fed say why it is empty and what to do", async () => {
  // The quiet store is its own SQLite file, also on a test:pg run (whose suite store holds calls).
  const quiet = mkdtempSync(join(tmpdir(), "pbx-calls-quiet-"));
  const url = process.env.PBX_DATABASE_URL;
  delete process.env.PBX_DATABASE_URL;
  try {
    const store = (await openDataStore({}, quiet, { create: true })).db;
    try {
      await insertOrg(store, ORG_A, ORG_A, "quiet_");
    } finally {
      await store.destroy();
    }
    const list = await runCommand(CallsList, ["--org", ORG_A, "--data-dir", quiet]);
    assert.is(list.code, 0);
    assert.match(list.stderr, "0 of 0 calls");
    assert.match(list.stderr, "no engine events are recorded in this store");
    assert.match(list.stderr, "PBX_ENGINE=none");
    assert.match(list.stderr, "PBX_ENGINE=ami");
    const tail = await runCommand(CallsTail, ["--data-dir", quiet, "--no-follow"]);
    assert.is(tail.code, 0);
    assert.match(tail.stderr, "no engine events are recorded in this store");
  } finally {
    if (url !== undefined) process.env.PBX_DATABASE_URL = url;
  }
  // A store with calls never says it, even for an org with none matching.
  const filtered = await runCommand(CallsList, [
    "--org",
    ORG_B,
    "--data-dir",
    dir,
    "--number",
    "999",
  ]);
  assert.match(filtered.stderr, "0 of 0 calls");
  assert.not.match(filtered.stderr, "no engine events");
  const fed = await runCommand(CallsTail, ["--data-dir", dir, "--no-follow", "--lines", "1"]);
  assert.not.match(fed.stderr, "no engine events");
});

test("calls list: an unknown org, a bad filter, no store: exit 1 with one line", async () => {
  const unknown = await runCommand(CallsList, ["--org", "nope", "--data-dir", dir]);
  assert.is(unknown.code, 1);
  assert.match(unknown.error!.message, /Organization nope not found/);
  const bad = await runCommand(CallsList, ["--org", ORG_A, "--data-dir", dir, "--number", "1"]);
  assert.is(bad.code, 1);
  assert.match(bad.error!.message, /--number must be 3 to 20 digits/);
  const empty = mkdtempSync(join(tmpdir(), "pbx-calls-none-"));
  // No PBX_DATABASE_URL (a test:pg run sets one) and a data dir without pbx.db: no store.
  const url = process.env.PBX_DATABASE_URL;
  delete process.env.PBX_DATABASE_URL;
  const none = await runCommand(CallsList, ["--org", ORG_A, "--data-dir", empty]).finally(() => {
    if (url !== undefined) process.env.PBX_DATABASE_URL = url;
  });
  assert.is(none.code, 1);
  assert.match(none.error!.message, /no store in/);
});

test("calls tail --no-follow: the org's last events, one line each or JSON lines", async () => {
  const text = await runCommand(CallsTail, [
    "--org",
    ORG_B,
    "--data-dir",
    dir,
    "--lines",
    "2",
    "--no-follow",
  ]);
  assert.is(text.code, 0, text.stderr);
  const lines = text.stdout.trim().split("\n");
  assert.is(lines.length, 2);
  assert.match(lines[1]!, /Hangup/);
  const json = await runCommand(CallsTail, [
    "--org",
    ORG_A,
    "--data-dir",
    dir,
    "--lines",
    "100",
    "--no-follow",
    "--json",
  ]);
  const events = json.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as TailedCallEvent);
  assert.ok(events.length > 5);
  assert.ok(
    events.every((e) => e.org_id === ORG_A),
    "only org A's events",
  );
  assert.ok(events.some((e) => e.event === "QueueCallerJoin"));
});

test("tail follows: events stored after it started are printed, then it stops on abort", async () => {
  const stop = new AbortController();
  const seen: TailedCallEvent[] = [];
  let pauses = 0;
  for await (const event of tailCallEvents({
    db,
    orgId: ORG_A,
    lines: 0,
    follow: true,
    signal: stop.signal,
    // Instead of waiting: the first pause stores a new call, the next ends the tail.
    pause: async () => {
      pauses++;
      if (pauses === 1) await replay("internal");
      else stop.abort();
    },
  })) {
    seen.push(event);
  }
  const internal = String(fixtures.get("internal")!.events[0]!.linkedid);
  assert.ok(seen.length > 0);
  assert.ok(seen.every((e) => e.linkedid === internal && e.org_id === ORG_A));
  assert.is(seen.at(-1)!.event, "Hangup");
});

test.run();
