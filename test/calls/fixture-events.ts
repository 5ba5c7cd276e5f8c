// The recorded AMI event sequences of fixtures/calls (written by `npm run record:call-fixtures`
// from real calls through Asterisk 22), optionally rewritten for other orgs.
import { readdirSync, readFileSync } from "node:fs";
import type { AmiMessage } from "../../src/engine/ami-connection.js";

const DIR = new URL("../../fixtures/calls/", import.meta.url).pathname;

export interface CallFixture {
  scenario: string;
  description: string;
  orgs: { id: string; context_prefix: string }[];
  events: AmiMessage[];
}

export const ORG_A = "aaaaaaaa-0000-4000-8000-000000000001";
export const ORG_B = "bbbbbbbb-0000-4000-8000-000000000002";

/** Every recorded scenario, by name. */
export function callFixtures(): Map<string, CallFixture> {
  const fixtures = new Map<string, CallFixture>();
  for (const file of readdirSync(DIR)
    .filter((name) => name.endsWith(".json"))
    .sort()) {
    const fixture = JSON.parse(readFileSync(DIR + file, "utf8")) as CallFixture;
    fixtures.set(fixture.scenario, fixture);
  }
  return fixtures;
}

/** The events of `fixture` as if they were calls of other orgs (ids and context prefixes swapped). */
export function rewriteOrgs(
  events: readonly AmiMessage[],
  replacements: ReadonlyArray<readonly [from: string, to: string]>,
): AmiMessage[] {
  let text = JSON.stringify(events);
  for (const [from, to] of replacements) text = text.split(from).join(to);
  return JSON.parse(text) as AmiMessage[];
}

/** The Cdr events of a sequence. */
export function cdrEvents(events: readonly AmiMessage[]): AmiMessage[] {
  return events.filter((event) => event.event === "Cdr");
}

/** A Cdr event of org A, alone in its call unless `linkedid` says otherwise. */
export function cdrEvent(uniqueid: string, linkedid = uniqueid): AmiMessage {
  return {
    event: "Cdr",
    accountcode: ORG_A,
    source: "919812345678",
    destination: "101",
    destinationcontext: `org_${ORG_A}_internal`,
    callerid: '"Caller" <919812345678>',
    channel: `PJSIP/org_${ORG_A}_101-${uniqueid}`,
    destinationchannel: "",
    lastapplication: "Dial",
    lastdata: "",
    starttime: "2026-11-25 08:00:00",
    answertime: "2026-11-25 08:00:02",
    endtime: "2026-11-25 08:01:00",
    duration: "60",
    billableseconds: "58",
    disposition: "ANSWERED",
    uniqueid,
    linkedid,
    peeraccount: "",
    sequence: "1",
    direction: "outbound",
    recordingfile: "",
  };
}
