// Stores the engine's call records: the org is derived once, here, by SPEC.md §1 rule 3, and
// the record and its call (one per org and linkedid) are written in one transaction. A replayed
// event (reconnect, restart) is recognised by (uniqueid, sequence) and changes nothing. The call
// and queue webhooks a new journey event means are written to the outbox in that same
// transaction, so a replayed event, refused as a duplicate, never emits twice.
//
// Throughput (issue 32, docs/performance.md): a batch is one transaction, its records go in a few
// multi-row statements (stored, then folded into their calls) rather than two statements each,
// and their orgs are resolved for the whole batch with at most one store read.

import type { Clock } from "../../clock.js";
import type { CdrRecord, JourneyEvent } from "../../engine/call-events.js";
import type { CallDirection } from "../../model/call-outcomes.js";
import type { CallEvent, CallRecord } from "../../model/call-records.js";
import {
  callStepsOf,
  foldIntoCalls,
  insertCallEvent,
  insertCallRecords,
  type RecordOfOrg,
} from "../../store/call-record-repository.js";
import type { Db } from "../../store/database.js";
import { emitEvent } from "../webhooks/webhook-events.js";
import type { RefreshingOrgDirectory } from "./call-org.js";
import { callWebhooksOf } from "./call-webhooks.js";

export type IngestResult =
  | { stored: true; orgId: string | null; linkedid: string }
  | { stored: false; reason: "duplicate" | "no_org" };

export interface CallIngestOptions {
  db: Db;
  clock: Clock;
  orgs: RefreshingOrgDirectory;
  /** The engine node whose events these are (issue 25), stamped on what is stored; absent: none. */
  nodeId?: string;
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
  nodeId: string | null = null,
): CallRecord {
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
    node_id: nodeId,
  };
}

/** What the engine reported: a call record, or a step of a call's journey. */
export type EngineCallInput =
  | { kind: "record"; record: CdrRecord }
  | { kind: "event"; event: JourneyEvent };

/** Asterisk's `<epoch>.<micros>` padded so that text order is time order. */
export function sortableTimestamp(timestamp: string): string {
  const [seconds = "0", micros = "0"] = timestamp.split(".");
  return `${seconds.padStart(12, "0")}.${micros.padStart(6, "0")}`;
}

function callEventRow(event: JourneyEvent, orgId: string): CallEvent {
  return {
    org_id: orgId,
    linkedid: event.linkedid,
    uniqueid: event.uniqueid,
    event: event.event,
    timestamp: sortableTimestamp(event.timestamp),
    channel: event.channel,
    state: event.state,
    context: event.context,
    exten: event.exten,
    detail: JSON.stringify(event.detail),
  };
}

/** Ingests call records and journey events into the store. */
export class CallIngest {
  constructor(private readonly options: CallIngestOptions) {}

  /** Stores one record (and folds it into its call) unless it is already stored. */
  async ingest(record: CdrRecord): Promise<IngestResult> {
    return (await this.ingestBatch([{ kind: "record", record }]))[0]!;
  }

  /**
   * Stores several inputs in one transaction (a burst of events costs one commit), each exactly
   * as `ingest` would: org by rule 3, nothing stored twice. Journey events of no org are dropped.
   * All or nothing: when it throws, nothing of the batch is stored.
   */
  async ingestBatch(inputs: readonly EngineCallInput[]): Promise<IngestResult[]> {
    const orgs = await this.options.orgs.orgsOf(
      inputs.map((input) =>
        input.kind === "record"
          ? input.record
          : { accountcode: input.event.accountcode, peeraccount: "", channel: input.event.channel },
      ),
    );
    const now = this.options.clock();
    const records: { index: number; orgId: string | null; row: CallRecord }[] = [];
    for (const [index, input] of inputs.entries()) {
      if (input.kind === "record") {
        records.push({
          index,
          orgId: orgs[index]!,
          row: callRecordRow(input.record, orgs[index]!, now, this.options.nodeId ?? null),
        });
      }
    }
    return this.options.db.transaction().execute(async (tx) => {
      const results: IngestResult[] = new Array(inputs.length);
      // Records: the fold is order-independent and touches no journey table, so they are stored
      // together, whatever journey events lie between them.
      const stored = await insertCallRecords(
        tx,
        records.map((record) => record.row),
      );
      const toFold: RecordOfOrg[] = [];
      for (const [i, { index, orgId, row }] of records.entries()) {
        if (!stored[i]) {
          results[index] = { stored: false, reason: "duplicate" };
          continue;
        }
        // A record no org claims (the carrier's side of a call) is kept but belongs to no call.
        if (orgId !== null) toFold.push({ orgId, row });
        results[index] = { stored: true, orgId, linkedid: row.linkedid };
      }
      await foldIntoCalls(tx, toFold);
      // Journey events: one after the other, as each one's webhooks depend on the steps before.
      for (const [index, input] of inputs.entries()) {
        if (input.kind !== "event") continue;
        const orgId = orgs[index]!;
        if (orgId === null) {
          results[index] = { stored: false, reason: "no_org" };
          continue;
        }
        const prior = await callStepsOf(tx, orgId, input.event.linkedid);
        if (!(await insertCallEvent(tx, callEventRow(input.event, orgId)))) {
          results[index] = { stored: false, reason: "duplicate" };
          continue;
        }
        for (const webhook of callWebhooksOf(input.event, prior)) {
          await emitEvent(tx, orgId, webhook.type, webhook.data, tx, this.options.clock);
        }
        results[index] = { stored: true, orgId, linkedid: input.event.linkedid };
      }
      return results;
    });
  }
}
