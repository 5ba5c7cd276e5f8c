// Time conditions in a real Asterisk 22 (issue 27 item 6): DID calls through the gateway reach a
// schedule's context, whose GotoIfTime reads the wall clock of the schedule's own zone. So that an
// open and a closed branch both happen now, whenever the suite runs, the ranges are computed from
// the current time: two hours around now on the wall clock of Asia/Kolkata, every day. The same
// ranges are open in Kolkata and closed in New York (9.5 to 10.5 hours behind); a third schedule
// has a dated exception around today (STRFTIME in the zone) with a destination of its own. The
// simulator, asked at the same instant, names the same branch; the engine logs no WARNING/ERROR.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileAll } from "../../src/compiler/index.js";
import { simulateCall } from "../../src/compiler/simulate.js";
import type { AsteriskInstance } from "../../src/engine/testing/asterisk-instance.js";
import { loadOrgSources } from "../../src/model/files.js";
import type { OrgState } from "../../src/model/org-state.js";
import {
  dayNumber,
  localTime,
  MINUTES_PER_DAY,
  minuteOfDay,
  timeOfDay,
} from "../../src/model/time-conditions.js";
import { boot } from "./helpers.js";
import { calls, type Step, traceCall } from "./trace.js";

const A = "aaaaaaaa-0000-4000-8000-0000000000c7";
const P = "org_tc_";
const MD5 = "5f4dcc3b5aa765d61d8327deb882cf99";
const ZONE = "Asia/Kolkata";

/** YYYY-MM-DD of day number `day`. */
function dateOfDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

function orgYaml(now: number): string {
  const local = localTime(now, ZONE);
  const minute = minuteOfDay(local.time);
  // Two hours around now, wrapping past midnight when now is near it (an end before the start).
  const start = timeOfDay((minute - 60 + MINUTES_PER_DAY) % MINUTES_PER_DAY);
  const end = timeOfDay((minute + 60) % MINUTES_PER_DAY);
  const today = dayNumber(local.date);
  const range = `ranges: [ { days: [mon, tue, wed, thu, fri, sat, sun], start: "${start}", end: "${end}" } ]`;
  const branches =
    'open_destination_type: extension, open_destination: "101", closed_destination_type: hangup';
  return `
org: { id: ${A}, name: Timed, context_prefix: ${P} }
users:
  - { extension: "101", name: Alice, sip: { md5_cred: ${MD5} } }
dids:
  - { number: "+918065978071", routing_type: time_condition, routing_destination: open-here }
  - { number: "+918065978072", routing_type: time_condition, routing_destination: closed-there }
  - { number: "+918065978073", routing_type: time_condition, routing_destination: holiday }
time_conditions:
  - { name: open-here, time_zone: ${ZONE}, ${range}, ${branches} }
  - { name: closed-there, time_zone: America/New_York, ${range}, ${branches} }
  - name: holiday
    time_zone: ${ZONE}
    ${range}
    exceptions:
      - { name: Today, start_date: "${dateOfDay(today - 1)}", end_date: "${dateOfDay(today + 1)}", destination_type: voicemail, destination: "101" }
    ${branches.replaceAll(", ", "\n    ")}
`;
}

const TEST_DIALPLAN = ["[pbxtest-silent]", "exten => s,1,Wait(15)", " same => n,Hangup()", ""].join(
  "\n",
);

interface Context {
  engine: AsteriskInstance;
  state: OrgState;
}

const test = suite<Context>("time conditions in the engine");

test.before(async (context) => {
  const loaded = loadOrgSources([{ file: "timed.yaml", text: orgYaml(Date.now()) }], {});
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((d) => `${d.path}: ${d.message}`).join("\n"));
  context.state = loaded.orgs[0]!.state;
  const compiled = compileAll([context.state], {
    environment: "prod",
    staging_endpoint: "staging-tunnel",
  });
  context.engine = await boot(compiled.files, {
    etcFiles: { "extensions_test.conf": TEST_DIALPLAN },
    extensionsAppend: '#include "extensions_test.conf"',
  });
});

test.after(async (context) => {
  await context.engine?.stop();
});

/** The steps a DID call runs in the time condition's context. */
function inSchedule(list: readonly Step[], name: string): Step[] {
  return list.filter((step) => step.context === `${P}tc_${name}`);
}

test("open now in its own zone: GotoIfTime with the zone goes to open, then the user", async ({
  engine,
  state,
}) => {
  const list = await traceCall(
    engine,
    "+918065978071@gateway-inbound",
    "s@pbxtest-silent",
    new RegExp(`Executing \\[101@${P}internal:1\\]`),
  );
  const schedule = inSchedule(list, "open-here");
  const check = schedule.find((step) => step.app === "GotoIfTime");
  assert.ok(check, calls(list).join("\n"));
  assert.match(check!.args, `,*,*,*,${ZONE}?open,1`);
  assert.ok(
    schedule.some((step) => step.exten === "open"),
    `took the open branch:\n${calls(schedule).join("\n")}`,
  );
  assert.not.ok(schedule.some((step) => step.exten === "closed"));
  const simulated = simulateCall(state, { did: "+918065978071", at: Date.now() });
  assert.equal(simulated.path, ["time_condition open-here", "user 101"]);
});

test("the same hours in New York are closed now: goodbye and hang up", async ({
  engine,
  state,
}) => {
  const list = await traceCall(
    engine,
    "+918065978072@gateway-inbound",
    "s@pbxtest-silent",
    new RegExp(`Executing \\[closed@${P}tc_closed-there:2\\] Hangup`),
  );
  const schedule = inSchedule(list, "closed-there");
  assert.ok(
    schedule.every((step) => step.exten !== "open"),
    `never took the open branch:\n${calls(schedule).join("\n")}`,
  );
  assert.ok(
    schedule.some((step) => step.app === "GotoIfTime" && step.args.includes("America/New_York")),
    calls(schedule).join("\n"),
  );
  assert.equal(calls(schedule.filter((step) => step.exten === "closed")), [
    "Playback(vm-goodbye)",
    "Hangup()",
  ]);
  const simulated = simulateCall(state, { did: "+918065978072", at: Date.now() });
  assert.equal(simulated.path, ["time_condition closed-there", "hangup"]);
});

test("a dated exception around today wins over open hours: its own destination", async ({
  engine,
  state,
}) => {
  const list = await traceCall(
    engine,
    "+918065978073@gateway-inbound",
    "s@pbxtest-silent",
    new RegExp(`Executing \\[x0@${P}tc_holiday:1\\] VoiceMail`),
  );
  const schedule = inSchedule(list, "holiday");
  const today = schedule.find((step) => step.app === "Set" && step.args.startsWith("TC_TODAY="));
  assert.ok(today, calls(schedule).join("\n"));
  assert.match(today!.args, /^TC_TODAY=\d{8}$/, "STRFTIME in the zone gave the local date");
  assert.not.ok(
    schedule.some((step) => step.app === "GotoIfTime"),
    "the exception came first",
  );
  const simulated = simulateCall(state, { did: "+918065978073", at: Date.now() });
  assert.equal(simulated.path, ["time_condition holiday", "voicemail 101"]);
});

test("the dialplan loaded and every traced call ran with no WARNING or ERROR", ({ engine }) => {
  assert.equal(engine.problems(), []);
});

test.run();
