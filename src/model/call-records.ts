// A call as pbxctl keeps it: the engine's records (legs) and events (steps), and the calls folded
// from them. Declared once here for the engine ingest, the call listings, the ticket poller and
// the store, whose tables are these types plus their generated ids (src/store/call-tables.ts).
import type { CallDirection } from "./call-outcomes.js";

/** One record (leg) of a call as the engine posts it and ingest stores it (its CDR). */
export interface CallRecord {
  org_id: string | null;
  uniqueid: string;
  sequence: number;
  linkedid: string;
  /** ISO 8601 UTC, like every timestamp of the store. */
  calldate: string;
  answerdate: string | null;
  enddate: string | null;
  src: string;
  dst: string;
  dcontext: string;
  clid: string;
  channel: string;
  dstchannel: string;
  lastapp: string;
  lastdata: string;
  duration: number;
  billsec: number;
  disposition: string;
  accountcode: string;
  peeraccount: string;
  direction: CallDirection;
  recording_file: string | null;
  ingested_at: string;
  /** The engine node that carried the call (migration 2981); null: the one implicit engine. */
  node_id: string | null;
}

/** A stored record, with the id the store gave it (the order of arrival). */
export type StoredCallRecord = CallRecord & { id: number };

/** A call folded from its records: one per org and linkedid. */
export interface StoredCall {
  org_id: string;
  linkedid: string;
  first_uniqueid: string;
  first_sequence: number;
  calldate: string;
  enddate: string | null;
  src: string;
  dst: string;
  channel: string;
  dstchannel: string;
  duration: number;
  billsec: number;
  disposition: string;
  direction: CallDirection;
  recording_file: string | null;
  legs: number;
  /** The engine node that carried the call (migration 2981); null: the one implicit engine. */
  node_id: string | null;
}

/** One engine event of a call (a step of its journey) as ingest stores it. */
export interface CallEvent {
  org_id: string;
  linkedid: string;
  uniqueid: string;
  event: string;
  /** `<epoch>.<microseconds>` zero-padded to sort as text. */
  timestamp: string;
  channel: string;
  state: string;
  context: string;
  exten: string;
  /** JSON object. */
  detail: string;
}

/** A stored event, with the id the store gave it (the order of arrival). */
export type StoredCallEvent = CallEvent & { id: number };
