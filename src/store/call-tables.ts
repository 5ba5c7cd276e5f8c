// Row types of the call tables (migration 1201): the records Asterisk posts and the calls folded
// from them, one per org and linkedid.
import type { Generated, Insertable, Selectable } from "kysely";
import type { CallDirection } from "../model/call-outcomes.js";

export type { CallDirection };

export interface CallRecordsTable {
  id: Generated<number>;
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

export interface CallsTable {
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

export type CallRecordRow = Selectable<CallRecordsTable>;
export type NewCallRecordRow = Insertable<CallRecordsTable>;
export type CallRow = Selectable<CallsTable>;

export interface CallEventsTable {
  id: Generated<number>;
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

export type CallEventRow = Selectable<CallEventsTable>;
export type NewCallEventRow = Insertable<CallEventsTable>;
