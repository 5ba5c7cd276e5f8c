// The call-record poller (SPEC.md §4.7, §8): every 30 s it reads the call records stored since
// its cursor, leaves out channels that start with `Local/`, keeps one record per call (the
// longest of the org's records of that linkedid, looked up by org: an index serves it and two
// orgs' linkedids never mix), names the org by the context prefix in the channel, keeps inbound calls and POSTs
// each to `{events_url}/auto-ticket/{org_id}`. The calls found are written to an outbox in the
// same transaction that moves the cursor, then sent; a failed POST stays there and is sent again
// on a later tick. So a restart neither skips a record nor sends a call twice as a new one (the
// intake is idempotent by linkedid as well).

import type { Clock } from "../clock.js";
import { systemTimers, type TimerHandle, type Timers } from "../clock.js";
import { OrgDirectory } from "../domain/calls/call-org.js";
import { createHttpPost, type HttpPost } from "../http-post.js";
import {
  attemptResultOf,
  failedAttemptResult,
  noInstruments,
  type OutboxInstruments,
} from "../metrics/instruments.js";
import type { CallRecord } from "../model/call-records.js";
import { listOrgMarkers } from "../store/call-record-repository.js";
import type { Db } from "../store/database.js";
import { createTicketPollerRepository } from "../store/ticket-intake-repository.js";
import type { IntakeCall } from "./classify.js";
import { silentLogger, type TicketLogger } from "./logger.js";

/** The poll interval (SPEC.md §8). */
export const POLL_INTERVAL_MS = 30_000;
/** Records read per look; a longer backlog is read over several looks of one tick. */
const BATCH = 500;
/** Retry delays of a failed POST, then every last one. */
const RETRY_MS = [30_000, 60_000, 300_000, 900_000];

/** POSTs one JSON body; resolves with the HTTP status, rejects when there is no answer. */
export type IntakePost = HttpPost;

/** The intake's URL is the operator's own configuration: redirects are followed as before. */
export const fetchPost: IntakePost = createHttpPost({ timeoutMs: 10_000, redirect: "follow" });

export interface PollerOptions {
  db: Db;
  clock: Clock;
  /** `{events_url}`: the intake's base, e.g. `http://127.0.0.1:3000/events`. */
  eventsUrl: () => string;
  internalKey: string | null;
  post?: IntakePost;
  timers?: Timers;
  logger?: TicketLogger;
  intervalMs?: number;
  /** Intake POSTs by result and delivery latency (src/metrics). */
  instruments?: OutboxInstruments;
}

export interface CallRecordPoller {
  /** Looks now: reads new records into the outbox, then sends what is due. */
  tick(): Promise<{ queued: number; sent: number; failed: number }>;
  /** Ticks now and then every interval until stopped. */
  start(): void;
  stop(): Promise<void>;
}

/** The org whose context prefix the channel names (longest prefix first), or null. */
export function orgOfChannel(directory: OrgDirectory, channel: string): string | null {
  return directory.orgOf({ accountcode: "", peeraccount: "", channel });
}

/** The body sent for a call: its longest record. */
export function intakeCallOf(record: CallRecord): IntakeCall {
  return {
    linkedid: record.linkedid,
    uniqueid: record.uniqueid,
    channel: record.channel,
    dstchannel: record.dstchannel,
    src: record.src,
    dst: record.dst,
    dcontext: record.dcontext,
    lastapp: record.lastapp,
    disposition: record.disposition,
    direction: record.direction,
    duration: record.duration,
    billsec: record.billsec,
    calldate: record.calldate,
  };
}

/**
 * The calls the new records belong to: their linkedids by the org stored on them (SPEC.md §1
 * rule 3, at ingest), in the order first seen. A linkedid is looked up within its org only: two
 * orgs' calls may share one, and the lookup by org is the one an index serves. Records of no org
 * (the carrier's leg) name no org's call, and `Local/` halves never speak for one.
 */
export function callsByOrg(records: readonly CallRecord[]): Map<string, string[]> {
  const calls = new Map<string, Set<string>>();
  for (const record of records) {
    if (record.org_id === null || record.channel.startsWith("Local/")) continue;
    const linkedids = calls.get(record.org_id) ?? new Set<string>();
    calls.set(record.org_id, linkedids.add(record.linkedid));
  }
  return new Map([...calls].map(([orgId, linkedids]) => [orgId, [...linkedids]]));
}

/** One record per call (org and linkedid): the longest duration (the earliest stored on a tie). */
export function longestPerCall(records: readonly CallRecord[]): CallRecord[] {
  const best = new Map<string, CallRecord>();
  for (const record of records) {
    if (record.channel.startsWith("Local/")) continue;
    const call = `${record.org_id}\u0000${record.linkedid}`;
    const held = best.get(call);
    if (!held || record.duration > held.duration) best.set(call, record);
  }
  return [...best.values()];
}

export function createCallRecordPoller(options: PollerOptions): CallRecordPoller {
  const { db, clock } = options;
  const post = options.post ?? fetchPost;
  const timers = options.timers ?? systemTimers;
  const logger = options.logger ?? silentLogger;
  const interval = options.intervalMs ?? POLL_INTERVAL_MS;
  const measure = options.instruments ?? noInstruments.intakePosts;
  let timer: TimerHandle | null = null;
  let running = false;
  let current: Promise<unknown> | null = null;

  /** Moves the cursor over one batch; resolves with the calls queued, or null when none is new. */
  async function readBatch(): Promise<number | null> {
    return db.transaction().execute(async (trx) => {
      const poller = createTicketPollerRepository(trx);
      const cursor = await poller.cursor();
      const records = await poller.recordsAfter(cursor, BATCH);
      if (records.length === 0) return null;
      const lastId = records.at(-1)!.id;
      const directory = new OrgDirectory(await listOrgMarkers(trx));
      const at = clock().toISOString();
      let queued = 0;
      for (const [callOrg, linkedids] of callsByOrg(records)) {
        for (const record of longestPerCall(await poller.recordsOfCalls(callOrg, linkedids))) {
          if (record.direction !== "inbound") continue;
          const orgId = orgOfChannel(directory, record.channel);
          if (orgId === null) continue;
          const body = JSON.stringify(intakeCallOf(record));
          if (await poller.enqueue(orgId, record.linkedid, body, at)) queued++;
        }
      }
      await poller.setCursor(lastId, at);
      return queued;
    });
  }

  async function sendDue(): Promise<{ sent: number; failed: number }> {
    const poller = createTicketPollerRepository(db);
    const headers: Record<string, string> = options.internalKey
      ? { "x-internal-key": options.internalKey }
      : {};
    let sent = 0;
    let failed = 0;
    for (const due of await poller.due(clock().toISOString(), 200)) {
      const url = `${options.eventsUrl()}/auto-ticket/${due.org_id}`;
      const attempts = due.attempts + 1;
      let problem: string;
      try {
        const status = await post(url, due.body, headers);
        const delivered = status >= 200 && status < 300;
        measure.attempt(
          attemptResultOf(status),
          delivered ? (clock().getTime() - Date.parse(due.created_at)) / 1000 : null,
        );
        if (delivered) {
          await poller.markSent(due.org_id, due.linkedid, attempts);
          sent++;
          continue;
        }
        problem = `intake answered ${status}`;
      } catch (error) {
        measure.attempt(failedAttemptResult(error), null);
        problem = error instanceof Error ? error.message : String(error);
      }
      failed++;
      const delay = RETRY_MS[Math.min(attempts - 1, RETRY_MS.length - 1)]!;
      const next = new Date(clock().getTime() + delay).toISOString();
      await poller.markFailed(due.org_id, due.linkedid, attempts, problem, next);
      logger.error(
        { org_id: due.org_id, linkedid: due.linkedid, error: problem },
        "auto-ticket POST failed",
      );
    }
    return { sent, failed };
  }

  // One look at a time: a look asked for while one runs (a test, the timer) waits for it.
  let chain: Promise<unknown> = Promise.resolve();
  function tick(): Promise<{ queued: number; sent: number; failed: number }> {
    const run = chain.then(look, look);
    chain = run.catch(() => {});
    return run;
  }

  async function look() {
    let queued = 0;
    for (;;) {
      const batch = await readBatch();
      if (batch === null) break;
      queued += batch;
    }
    const { sent, failed } = await sendDue();
    return { queued, sent, failed };
  }

  function schedule(): void {
    if (!running) return;
    timer = timers.setTimer(
      interval,
      () => {
        timer = null;
        const run = tick()
          .catch((error: unknown) => logger.error({ err: error }, "call-record poll failed"))
          .finally(() => {
            current = null;
            schedule();
          });
        current = run;
      },
      { background: true },
    );
  }

  return {
    tick,
    start() {
      if (running) return;
      running = true;
      current = tick()
        .catch((error: unknown) => logger.error({ err: error }, "call-record poll failed"))
        .finally(() => {
          current = null;
          schedule();
        });
    },
    async stop() {
      running = false;
      timer?.cancel();
      timer = null;
      await current;
    },
  };
}
