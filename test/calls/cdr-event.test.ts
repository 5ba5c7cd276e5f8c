// Reading cdr_manager's `Cdr` events: times in the engine's own zone, refused events.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseCdrEvent } from "../../src/engine/call-events.js";
import { callFixtures, cdrEvents } from "./fixture-events.js";

const recorded = cdrEvents(callFixtures().get("outbound-busy")!.events)[0]!;

function startOf(event: Record<string, unknown>): string {
  const parsed = parseCdrEvent(event as never);
  if (!("record" in parsed)) throw new Error(parsed.problem);
  return parsed.record.start.toISOString();
}

test("times are read in the engine's zone, found from the event's epoch Timestamp", () => {
  // The recording engine ran in UTC: its wall clock and its Timestamp agree.
  const utc = startOf(recorded);
  assert.is(utc, `${String(recorded.starttime).replace(" ", "T")}.000Z`);
  // The same call from an engine at UTC+05:30 writes wall-clock times 5.5 hours ahead.
  const shift = (value: unknown) => {
    const ms = Date.parse(`${String(value).replace(" ", "T")}Z`) + 5.5 * 3600 * 1000;
    return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
  };
  const kolkata = {
    ...recorded,
    starttime: shift(recorded.starttime),
    endtime: shift(recorded.endtime),
  };
  assert.is(startOf(kolkata), utc);
  // Records posted a few seconds after the hangup still find the zone.
  const late = { ...kolkata, timestamp: String(Number(recorded.timestamp) + 40) };
  assert.is(startOf(late), utc);
});

test("events that cannot be stored are refused with the reason", () => {
  const problem = (event: Record<string, unknown>) => {
    const parsed = parseCdrEvent(event as never);
    return "problem" in parsed ? parsed.problem : null;
  };
  assert.match(problem({ ...recorded, linkedid: undefined }) ?? "", /\[mappings\]/);
  assert.match(problem({ ...recorded, disposition: "LOST" }) ?? "", /Disposition/);
  assert.match(problem({ ...recorded, uniqueid: "1.2; DROP" }) ?? "", /UniqueID/);
  assert.match(problem({ ...recorded, starttime: "yesterday" }) ?? "", /StartTime/);
  assert.is(problem(recorded), null);
});

test.run();
