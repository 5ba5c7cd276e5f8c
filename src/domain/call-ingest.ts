// Stores the engine's call records: the org is derived once, here, by SPEC.md §1 rule 3, and
// the record and its call (one per org and linkedid) are written in one transaction. A replayed
// event (reconnect, restart) is recognised by (uniqueid, sequence) and changes nothing.
import type { CdrRecord } from "../engine/call-events.js";
import { foldIntoCall, insertCallRecord } from "../store/call-record-repository.js";
import type { CallDirection, NewCallRecordRow } from "../store/call-tables.js";
import type { Db } from "../store/database.js";
import type { RefreshingOrgDirectory } from "./call-org.js";
import type { Clock } from "./ports.js";

export type IngestResult =
  | { stored: true; orgId: string | null; linkedid: string }
  | { stored: false; reason: "duplicate" };

export interface CallIngestOptions {
  db: Db;
  clock: Clock;
  orgs: RefreshingOrgDirectory;
}

/** The direction of one record: what the dialplan marked, else a call between the org's phones. */
function directionOf(record: CdrRecord): CallDirection {
  return record.direction ?? "internal";
}

/** The row a record is stored as. */
export function callRecordRow(
  record: CdrRecord,
  orgId: string | null,
  ingestedAt: Date,
): NewCallRecordRow {
  return {
    org_id: orgId,
    uniqueid: record.uniqueid,
    sequence: record.sequence,
    linkedid: record.linkedid,
    calldate: record.start.toISOString(),
    answerdate: record.answer?.toISOString() ?? null,
    enddate: record.end?.toISOString() ?? null,
    src: record.src,
    dst: record.dst,
    dcontext: record.dcontext,
    clid: record.clid,
    channel: record.channel,
    dstchannel: record.dstchannel,
    lastapp: record.lastapp,
    lastdata: record.lastdata,
    duration: record.duration,
    billsec: record.billsec,
    disposition: record.disposition,
    accountcode: record.accountcode,
    peeraccount: record.peeraccount,
    direction: directionOf(record),
    recording_file: record.recordingFile,
    ingested_at: ingestedAt.toISOString(),
  };
}

/** Ingests call records into the store. */
export class CallIngest {
  constructor(private readonly options: CallIngestOptions) {}

  /** Stores one record (and folds it into its call) unless it is already stored. */
  async ingest(record: CdrRecord): Promise<IngestResult> {
    const orgId = await this.options.orgs.orgOf(record);
    const row = callRecordRow(record, orgId, this.options.clock());
    return this.options.db.transaction().execute(async (tx) => {
      if (!(await insertCallRecord(tx, row))) return { stored: false, reason: "duplicate" };
      // A record no org claims (the carrier's side of a call) is kept but belongs to no call.
      if (orgId !== null) await foldIntoCall(tx, orgId, row);
      return { stored: true, orgId, linkedid: record.linkedid };
    });
  }
}
