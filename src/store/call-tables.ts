// Row types of the call tables (migration 1201): the records Asterisk posts and the calls folded
// from them, one per org and linkedid. Their columns are the model's types (src/model/
// call-records.ts), with the ids the store generates.
import type { Generated, Insertable, Selectable } from "kysely";
import type { CallDirection } from "../model/call-outcomes.js";
import type { CallEvent, CallRecord, StoredCall } from "../model/call-records.js";

export type { CallDirection };

export type CallRecordsTable = CallRecord & { id: Generated<number> };
export type CallsTable = StoredCall;
export type CallEventsTable = CallEvent & { id: Generated<number> };

export type CallRecordRow = Selectable<CallRecordsTable>;
export type NewCallRecordRow = Insertable<CallRecordsTable>;
export type CallRow = Selectable<CallsTable>;
export type CallEventRow = Selectable<CallEventsTable>;
export type NewCallEventRow = Insertable<CallEventsTable>;
