// The intake takes a whole Asterisk CDR row, as a poller of another version or any CDR source
// sends it (issue 28 item 2): every standard column, numbers as numbers or digit strings, both
// time formats; only a record missing what SPEC.md §4.7's table needs is refused, by name.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { IntakeCall } from "../../src/tickets/classify.js";
import type { TicketIntake } from "../../src/tickets/intake.js";
import { serveIntake } from "./helpers.js";

const ORG = "11111111-2222-4333-8444-555555555555";

/** An intake that only records what it was given. */
function recordingIntake(): TicketIntake & { received: IntakeCall[] } {
  const received: IntakeCall[] = [];
  return {
    received,
    receive: async (_orgId, call) => {
      received.push(call);
      return { accepted: true };
    },
    start: async () => {},
    stop: async () => {},
    idle: async () => {},
  };
}

/** A row as cdr_pgsql / cdr_adaptive_odbc hold it, with the dialplan's direction mapping. */
function cdrRow(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    calldate: "2026-11-26 13:44:31",
    clid: '"Caller" <919812345678>',
    src: "919812345678",
    dst: "600",
    dcontext: "org_acme_queue",
    channel: "PJSIP/org_acme_carrier-00000001",
    dstchannel: "",
    lastapp: "Queue",
    lastdata: "org_acme_q600,,,,120",
    start: "2026-11-26 13:44:31",
    answer: "",
    end: "2026-11-26 13:46:31",
    duration: "120",
    billsec: 0,
    disposition: "NO ANSWER",
    amaflags: "DOCUMENTATION",
    accountcode: ORG,
    peeraccount: "",
    uniqueid: "1764164671.1",
    linkedid: "1764164671.1",
    userfield: "",
    sequence: 7,
    direction: "inbound",
    recordingfile: "",
    ...overrides,
  };
}

async function post(body: unknown) {
  const intake = recordingIntake();
  const served = await serveIntake(intake, null);
  try {
    const res = await fetch(`${served.eventsUrl}/auto-ticket/${ORG}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { error?: string }, intake };
  } finally {
    await served.close();
  }
}

test("a whole CDR row with Asterisk's local calldate is accepted; times become UTC", async () => {
  const { status, body, intake } = await post(cdrRow());
  assert.is(status, 202, JSON.stringify(body));
  const call = intake.received[0]!;
  // No offset in the row: read in this process's zone, as docs/calls.md's fallback does.
  assert.is(call.calldate, new Date(2026, 10, 26, 13, 44, 31).toISOString());
  assert.is(call.duration, 120, "a digit string is read as the number");
  assert.is(call.billsec, 0);
  assert.is(call.lastapp, "Queue");
  assert.is(call.dcontext, "org_acme_queue");
  assert.is(call.uniqueid, "1764164671.1");
});

test("ISO 8601 calldates keep their offset; `start` stands in for a missing calldate", async () => {
  const iso = await post(cdrRow({ calldate: "2026-11-26T13:44:31+05:30" }));
  assert.is(iso.status, 202, JSON.stringify(iso.body));
  assert.is(iso.intake.received[0]!.calldate, "2026-11-26T08:14:31.000Z");

  const { calldate: _dropped, ...withoutCalldate } = cdrRow({ start: "2026-11-26T08:14:31Z" });
  const start = await post(withoutCalldate);
  assert.is(start.status, 202, JSON.stringify(start.body));
  assert.is(start.intake.received[0]!.calldate, "2026-11-26T08:14:31.000Z");
});

test("columns the classification does not read are ignored, whatever their type", async () => {
  const { status, body } = await post(
    cdrRow({ amaflags: 3, sequence: "7", peeraccount: null, userfield: { any: "thing" } }),
  );
  assert.is(status, 202, JSON.stringify(body));
  const custom = await post(cdrRow({ x_custom_column: "kept by the source" }));
  assert.is(custom.status, 202, JSON.stringify(custom.body));
});

test("a record missing what the §4.7 table needs is refused with the field named", async () => {
  for (const field of ["linkedid", "src", "channel", "disposition", "direction"]) {
    const row = cdrRow();
    delete row[field];
    const { status, body } = await post(row);
    assert.is(status, 400, field);
    assert.match(String(body.error), field, `${field}: ${body.error}`);
  }
  const { calldate: _c, start: _s, ...timeless } = cdrRow();
  const noTime = await post(timeless);
  assert.is(noTime.status, 400);
  assert.match(String(noTime.body.error), "calldate");

  const badTime = await post(cdrRow({ calldate: "yesterday" }));
  assert.is(badTime.status, 400);
  assert.match(String(badTime.body.error), "calldate");

  const badNumber = await post(cdrRow({ duration: "12 s" }));
  assert.is(badNumber.status, 400);
  assert.match(String(badNumber.body.error), "duration");
});

test.run();
