// The engine's call events as typed values: AMI `Cdr` events (cdr_manager, with the mappings
// `pbxctl engine init` writes) become CdrRecords, channel events become ChannelSnapshots. Only
// fields Asterisk sends are read; anything malformed is refused here rather than stored.
import { type CallDisposition, isCallDisposition } from "../model/call-outcomes.js";
import type { CallRecord } from "../model/call-records.js";
import type { AmiMessage } from "./ami-connection.js";

export type CdrDisposition = CallDisposition;

/**
 * One call record as Asterisk posted it (one leg of a call; a call is all records of a linkedid).
 * Its text fields are the stored record's (`CallRecord`); times are Dates and names camelCase until
 * ingest stores it.
 */
export interface CdrRecord
  extends Pick<
    CallRecord,
    | "uniqueid"
    | "linkedid"
    | "src"
    | "dst"
    | "dcontext"
    | "clid"
    | "channel"
    | "dstchannel"
    | "lastapp"
    | "lastdata"
  > {
  /** Orders the records of one channel; with uniqueid it names the record. */
  sequence: number;
  accountcode: string;
  peeraccount: string;
  start: Date;
  answer: Date | null;
  end: Date | null;
  duration: number;
  billsec: number;
  disposition: CdrDisposition;
  /** The dialplan's `CDR(call_direction)`: set on DID entries and outbound routes only. */
  direction: "inbound" | "outbound" | null;
  /** The dialplan's `CDR(recording_file)`, relative to the monitor directory. */
  recordingFile: string | null;
}

/** Asterisk's unique ids: `<epoch>.<n>`, optionally after a system name. */
const ID = /^[A-Za-z0-9_.-]{1,150}$/;
const ASTERISK_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

function text(event: AmiMessage, key: string, max: number): string {
  const value = event[key];
  const single = Array.isArray(value) ? value[0] : value;
  return typeof single === "string" ? single.slice(0, max) : "";
}

/** The wall-clock fields of an Asterisk time (`YYYY-MM-DD HH:MM:SS`) read as if they were UTC. */
function fieldsAsUtc(value: string): number | null {
  const match = ASTERISK_TIME.exec(value);
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const ms = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
  return Number.isNaN(ms) ? null : ms;
}

const QUARTER_HOUR_MS = 15 * 60 * 1000;

/**
 * How far the engine's wall clock is ahead of UTC, from a `Cdr` event: cdr_manager writes times
 * in the engine's local zone with no offset, but the event's own `Timestamp` (manager.conf
 * `timestampevents`) is epoch time and is taken right after `EndTime` (records are posted at
 * hangup; engine init does not batch them). Zones are whole quarter hours, so rounding the
 * difference to one absorbs that delay. Null without a Timestamp.
 */
function engineZoneOffsetMs(event: AmiMessage): number | null {
  const timestamp = Number(text(event, "timestamp", 24));
  const end = fieldsAsUtc(text(event, "endtime", 32));
  if (!Number.isFinite(timestamp) || timestamp <= 0 || end === null) return null;
  return Math.round((end - timestamp * 1000) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
}

/**
 * An Asterisk time as a Date: in the engine's zone when its offset is known, else in this
 * process's zone (pbxctl and the engine must then share one, docs/calls.md).
 */
export function parseAsteriskTime(value: string, zoneOffsetMs: number | null = null): Date | null {
  if (zoneOffsetMs !== null) {
    const utc = fieldsAsUtc(value);
    return utc === null ? null : new Date(utc - zoneOffsetMs);
  }
  const match = ASTERISK_TIME.exec(value);
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const date = new Date(y!, mo! - 1, d!, h!, mi!, s!);
  return Number.isNaN(date.getTime()) ? null : date;
}

function count(value: string): number | null {
  return /^\d{1,9}$/.test(value) ? Number(value) : null;
}

/** Why a Cdr event cannot be stored, or null when it can. */
export type CdrParse = { record: CdrRecord } | { problem: string };

/** A `Cdr` event as a CdrRecord, or the reason it is unusable (missing mappings, bad values). */
export function parseCdrEvent(event: AmiMessage): CdrParse {
  const uniqueid = text(event, "uniqueid", 200);
  const linkedid = text(event, "linkedid", 200);
  const sequence = count(text(event, "sequence", 12));
  if (!ID.test(uniqueid)) return { problem: `bad UniqueID "${uniqueid}"` };
  if (!ID.test(linkedid) || sequence === null) {
    return {
      problem:
        "no LinkedID/Sequence: cdr_manager.conf lacks the [mappings] of `pbxctl engine init`",
    };
  }
  const zone = engineZoneOffsetMs(event);
  const start = parseAsteriskTime(text(event, "starttime", 32), zone);
  if (!start) return { problem: `bad StartTime "${text(event, "starttime", 32)}"` };
  const duration = count(text(event, "duration", 12));
  const billsec = count(text(event, "billableseconds", 12));
  if (duration === null || billsec === null) return { problem: "bad Duration/BillableSeconds" };
  const disposition = text(event, "disposition", 16);
  if (!isCallDisposition(disposition)) return { problem: `bad Disposition "${disposition}"` };
  const direction = text(event, "direction", 16);
  return {
    record: {
      uniqueid,
      linkedid,
      sequence,
      accountcode: text(event, "accountcode", 80),
      peeraccount: text(event, "peeraccount", 80),
      src: text(event, "source", 80),
      dst: text(event, "destination", 80),
      dcontext: text(event, "destinationcontext", 80),
      clid: text(event, "callerid", 160),
      channel: text(event, "channel", 80),
      dstchannel: text(event, "destinationchannel", 80),
      lastapp: text(event, "lastapplication", 80),
      lastdata: text(event, "lastdata", 256),
      start,
      answer: parseAsteriskTime(text(event, "answertime", 32), zone),
      end: parseAsteriskTime(text(event, "endtime", 32), zone),
      duration,
      billsec,
      disposition,
      direction: direction === "inbound" || direction === "outbound" ? direction : null,
      recordingFile: text(event, "recordingfile", 256) || null,
    },
  };
}

/** What a channel event (or a CoreShowChannel list item) says about one channel now. */
export interface ChannelSnapshot {
  uniqueid: string;
  linkedid: string;
  channel: string;
  /** Asterisk's state name: Down, Ring, Ringing, Up, Busy... */
  state: string;
  callerIdNum: string;
  callerIdName: string;
  connectedLineNum: string;
  accountcode: string;
  context: string;
  exten: string;
}

/** The channel snapshot every Asterisk 12+ channel event carries, or null without one. */
export function channelSnapshotOf(event: AmiMessage): ChannelSnapshot | null {
  const uniqueid = text(event, "uniqueid", 200);
  const channel = text(event, "channel", 200);
  if (!ID.test(uniqueid) || channel === "") return null;
  const linkedid = text(event, "linkedid", 200);
  return {
    uniqueid,
    linkedid: ID.test(linkedid) ? linkedid : uniqueid,
    channel,
    state: text(event, "channelstatedesc", 32),
    callerIdNum: text(event, "calleridnum", 80),
    callerIdName: text(event, "calleridname", 80),
    connectedLineNum: text(event, "connectedlinenum", 80),
    accountcode: text(event, "accountcode", 80),
    context: text(event, "context", 80),
    exten: text(event, "exten", 80),
  };
}

/** Events a call's journey shows, and the fields of each worth keeping beside the channel. */
const JOURNEY_DETAIL: Readonly<Record<string, readonly string[]>> = {
  newchannel: [],
  newstate: [],
  dialbegin: ["destchannel", "dialstring"],
  dialend: ["destchannel", "dialstatus"],
  bridgeenter: ["bridgeuniqueid", "bridgetype"],
  bridgeleave: ["bridgeuniqueid", "bridgetype"],
  queuecallerjoin: ["queue", "position", "count"],
  queuecallerleave: ["queue", "position", "count"],
  queuecallerabandon: ["queue", "position", "originalposition", "holdtime"],
  agentcalled: ["queue", "membername", "destchannel"],
  agentconnect: ["queue", "membername", "destchannel", "holdtime", "ringtime"],
  agentringnoanswer: ["queue", "membername", "destchannel", "ringtime"],
  agentcomplete: ["queue", "membername", "destchannel", "holdtime", "talktime", "reason"],
  musiconholdstart: ["class"],
  musiconholdstop: [],
  mixmonitorstart: [],
  mixmonitorstop: [],
  hangup: ["cause", "cause-txt"],
};

/** One step of a call as the engine reported it, with the engine's own time. */
export interface JourneyEvent extends ChannelSnapshot {
  /** The AMI event name as Asterisk spells it (`DialBegin`). */
  event: string;
  /** Asterisk's `Timestamp` (`<epoch>.<microseconds>`, manager.conf `timestampevents`). */
  timestamp: string;
  detail: Record<string, string>;
}

const TIMESTAMP = /^\d{1,12}\.\d{1,6}$/;

/** True for the events a journey keeps. */
export function isJourneyEvent(event: AmiMessage): boolean {
  return String(event.event ?? "").toLowerCase() in JOURNEY_DETAIL;
}

/**
 * A journey event, or null when the event is not one, has no channel, or carries no
 * `Timestamp` (without it a replayed event could not be told from a new one).
 */
export function journeyEventOf(event: AmiMessage): JourneyEvent | null {
  const name = text(event, "event", 40);
  const keep = JOURNEY_DETAIL[name.toLowerCase()];
  if (!keep) return null;
  const snapshot = channelSnapshotOf(event);
  const timestamp = text(event, "timestamp", 24);
  if (!snapshot || !TIMESTAMP.test(timestamp)) return null;
  const detail: Record<string, string> = {};
  for (const key of keep) {
    const value = text(event, key, 120);
    if (value !== "") detail[key] = value;
  }
  return { ...snapshot, event: name, timestamp, detail };
}
