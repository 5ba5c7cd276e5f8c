// The server's call tracking: the engine's call events (a sibling AMI connection with events on)
// feed call-record ingest and the live-call registry. Wired here, beside the deploy engine,
// because it joins the engine layer (events) to the domain (ingest, rule 3, live calls).
import type { Logger } from "pino";
import { CallIngest, type IngestResult } from "../domain/call-ingest.js";
import { RefreshingOrgDirectory } from "../domain/call-org.js";
import { LiveCalls } from "../domain/live-calls.js";
import type { Clock } from "../domain/ports.js";
import {
  AmiConnection,
  type AmiConnectionOptions,
  type AmiMessage,
} from "../engine/ami-connection.js";
import {
  type CallEventHandlers,
  dispatchCallEvent,
  followCallEvents,
} from "../engine/call-event-source.js";
import type { CdrRecord } from "../engine/call-events.js";
import { listOrgMarkers } from "../store/call-record-repository.js";
import type { Db } from "../store/database.js";

export interface CallTrackingOptions {
  db: Db;
  clock: Clock;
  logger?: Logger;
  /** The engine's AMI (PBX_AMI_*); without it nothing is followed and `feed` is the only input. */
  ami?: AmiConnectionOptions;
  /** Called after each record is ingested (stored, or recognised as a replay). */
  onIngested?: (record: CdrRecord, result: IngestResult) => void;
}

export interface CallTracking {
  live: LiveCalls;
  ingest: CallIngest;
  /** The events connection, when following an engine. */
  connection: AmiConnection | null;
  /** Routes one AMI event as if the engine had sent it (recorded fixtures, benchmarks). */
  feed(event: AmiMessage): void;
  /** Resolves once every record received so far is stored. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** Builds call tracking and, with `ami`, starts following the engine. */
export function startCallTracking(options: CallTrackingOptions): CallTracking {
  const orgs = new RefreshingOrgDirectory(() => listOrgMarkers(options.db), options.clock);
  const ingest = new CallIngest({ db: options.db, clock: options.clock, orgs });
  const live = new LiveCalls((evidence) => orgs.orgOfKnown(evidence), options.clock);
  const log = options.logger;
  // Records are stored one after another, in the order the engine posted them.
  let queue: Promise<void> = orgs.refresh().catch((error: unknown) => {
    log?.error({ err: error }, "loading orgs for call ingest failed");
  });
  const store = (record: CdrRecord) => {
    queue = queue.then(() =>
      ingest.ingest(record).then(
        (result) => options.onIngested?.(record, result),
        (error: unknown) =>
          log?.error({ err: error, uniqueid: record.uniqueid }, "call record not stored"),
      ),
    );
  };
  const handlers: CallEventHandlers = {
    cdr: store,
    channel: (event, snapshot) => live.channelEvent(event, snapshot),
    resync: (channels) => live.resync(channels),
    lost: () => live.lost(),
    problem: (message, fields) => log?.warn(fields ?? {}, message),
  };
  let connection: AmiConnection | null = null;
  let unfollow = () => {};
  if (options.ami) {
    connection = new AmiConnection({
      ...options.ami,
      events: true,
      ...(log
        ? { log: (message, fields) => log.info(fields ?? {}, `call events: ${message}`) }
        : {}),
    });
    unfollow = followCallEvents(connection, handlers);
    connection.start();
  }
  return {
    live,
    ingest,
    connection,
    feed: (event) => dispatchCallEvent(event, handlers),
    idle: () => queue,
    async stop() {
      unfollow();
      await connection?.close();
      await queue;
    },
  };
}
