// The server's call tracking: the engine's call events (a sibling AMI connection with events on)
// feed call-record ingest, the live-call registry and the phones' registration webhooks. Wired
// here, beside the deploy engine, because it joins the engine layer (events) to the domain
// (ingest, rule 3, live calls).
import type { Logger } from "pino";
import { type Clock, systemTimers, type TimerHandle, type Timers } from "../clock.js";
import { BatchQueue } from "../domain/calls/batch-queue.js";
import {
  CallIngest,
  type EngineCallInput,
  type IngestResult,
} from "../domain/calls/call-ingest.js";
import { RefreshingOrgDirectory } from "../domain/calls/call-org.js";
import { refusalError } from "../domain/calls/engine-refusals.js";
import { LiveCalls } from "../domain/calls/live-calls.js";
import { RegistrationIngest } from "../domain/calls/registration-ingest.js";
import { TrunkRegistrationIngest } from "../domain/calls/trunk-registration-ingest.js";
import { amiCallControl, type CallControlPort } from "../engine/ami-call-control.js";
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
import type { ContactChange, OutboundRegistration } from "../engine/registration-events.js";
import {
  type AmiInstruments,
  type CallIngestInstruments,
  noInstruments,
} from "../metrics/instruments.js";
import { listOrgMarkers, orgMarkerGeneration } from "../store/call-record-repository.js";
import type { Db } from "../store/database.js";
import { isStoreUnavailable } from "../store/store-errors.js";
import { startRegistrationStoring } from "./registration-storing.js";

/**
 * Most inputs written in one transaction, and the longest the first of them waits for more
 * (docs/performance.md): a burst costs a commit per 500 events, a trickle at most one per 10 ms
 * (not one per event: a commit is a disk flush), and every event is on its way to the store
 * within 10 ms of arriving (TARGETS: p95 event -> stored < 100 ms).
 */
export const INGEST_BATCH = { maxBatch: 500, maxDelayMs: 10 };

/**
 * The most call events held while the store is unavailable (docs/calls.md, "When the store is
 * unavailable"): about 40 minutes of a steady 20 events/s, and about 50 MB (a parsed Cdr record
 * held is ~0.85 KB). Beyond it the oldest go, counted in
 * pbx_call_events_dropped_total{reason="overflow"}.
 */
export const INGEST_MAX_HELD = 50_000;
/** The first wait before held events are tried again, doubled per failed try up to `max`. */
export const INGEST_BACKOFF_MS = { first: 200, max: 10_000 };
/** The longest `stop` spends storing what is left (one more try) before it lets it go. */
export const INGEST_STOP_MS = 5_000;

export interface CallTrackingOptions {
  db: Db;
  clock: Clock;
  /** What the ingest's batch delay is measured with (default the real timers). */
  timers?: Timers;
  /** Batch size and delay of the ingest (default INGEST_BATCH). */
  batch?: { maxBatch: number; maxDelayMs: number };
  logger?: Logger;
  /** The engine's AMI (PBX_AMI_*); without it nothing is followed and `feed` is the only input. */
  ami?: AmiConnectionOptions;
  /** Called after each record or journey event is ingested (stored, a replay, or of no org). */
  onIngested?: (input: EngineCallInput, result: IngestResult) => void;
  /**
   * Start as a standby (several replicas, issue 23): follow the engine for live calls and call
   * control, but store nothing until `takeOverIngest()`; default false (store at once).
   */
  standby?: boolean;
  /** What a standby keeps of what it received, replayed when it takes over (default 15 s). */
  standbyWindowMs?: number;
  /** Ingest counts and lag, and the events connection's state (src/metrics). */
  instruments?: { calls: CallIngestInstruments; ami: AmiInstruments };
  /** The engine node followed (issue 25): stamped on the call records and calls stored. */
  nodeId?: string;
  /** The most events held while the store is unavailable (default INGEST_MAX_HELD). */
  maxHeld?: number;
  /** The most contact changes held while the store is unavailable (default REGISTRATION_MAX_HELD). */
  maxRegistrationsHeld?: number;
  /** The longest `stop` spends on one more try of what is held (default INGEST_STOP_MS). */
  stopWaitMs?: number;
}

function uniqueidOf(input: EngineCallInput): string {
  return input.kind === "record" ? input.record.uniqueid : input.event.uniqueid;
}

/** When the engine says the input happened (ms since the epoch), if it says. */
function eventTimeOf(input: EngineCallInput): number | null {
  if (input.kind === "record") return (input.record.end ?? input.record.start).getTime();
  const seconds = Number(input.event.timestamp);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null;
}

export interface CallTracking {
  live: LiveCalls;
  /** Actions on live channels through the events connection; null without an engine. */
  control: CallControlPort | null;
  ingest: CallIngest;
  /** The events connection, when following an engine. */
  connection: AmiConnection | null;
  /** Routes one AMI event as if the engine had sent it (recorded fixtures, benchmarks). */
  feed(event: AmiMessage): void;
  /** Stores a list of outbound registrations as if the engine had listed it (recorded fixtures). */
  feedTrunks(registrations: OutboundRegistration[]): void;
  /** Resolves once everything received so far is stored (through a store outage: it waits). */
  idle(): Promise<void>;
  /** Whether this process stores what the engine sends (not a standby). */
  readonly ingesting: boolean;
  /**
   * Becomes the one that stores the engine's events: what arrived during the standby window is
   * stored first (the owner that died may not have stored it; the ingest's idempotency keys make
   * what it did store a replay, with no second record or webhook).
   */
  takeOverIngest(): void;
  /**
   * Stops storing (another replica took the ingest over); waits for what was being stored, and
   * tries what is held once more (while the store stays unavailable it stays held and retried).
   */
  standByIngest(): Promise<void>;
  /**
   * Forgets what the standby window kept, so a takeover stores none of it: the events of an
   * engine node held for its systemname (src/api/node-call-tracking.ts) are never stored.
   */
  discardKept(): void;
  /**
   * Stops following and stores what is left, trying held events once more; within `stopWaitMs`
   * whatever happens, letting go (and counting) what the store still did not take.
   */
  stop(): Promise<void>;
}

/** Builds call tracking and, with `ami`, starts following the engine. */
export function startCallTracking(options: CallTrackingOptions): CallTracking {
  const orgs = new RefreshingOrgDirectory({
    list: () => listOrgMarkers(options.db),
    generation: () => orgMarkerGeneration(options.db),
  });
  const ingest = new CallIngest({
    db: options.db,
    clock: options.clock,
    orgs,
    ...(options.nodeId !== undefined ? { nodeId: options.nodeId } : {}),
  });
  const live = new LiveCalls((evidence) => orgs.orgOfKnown(evidence), options.clock);
  const log = options.logger;
  const loaded = orgs.refresh().catch((error: unknown) => {
    log?.error({ err: error }, "loading orgs for call ingest failed");
  });

  // Inputs are stored in the order the engine sent them, in batches (src/domain/calls/batch-queue.ts).
  const measure = options.instruments?.calls ?? noInstruments.calls;
  const report = (batch: readonly EngineCallInput[], results: readonly IngestResult[]) => {
    const storedAt = options.clock().getTime();
    for (const [i, input] of batch.entries()) {
      const result = results[i]!;
      const at = eventTimeOf(input);
      measure.ingested(
        input.kind,
        result.stored ? "stored" : result.reason,
        at === null ? null : (storedAt - at) / 1000,
      );
      options.onIngested?.(input, result);
    }
  };
  /** When the store became unavailable (timers' scale), while events are held; null otherwise. */
  let unavailableSince: number | null = null;
  let unavailableError: unknown = null;
  /** Events let go for the cap since the ingest last caught up: logged when the first goes. */
  let overflowed = 0;
  // A batch is one transaction, all or nothing. When the store rejects it, its halves are tried,
  // and theirs, in order: one bad input costs a few more transactions, not the others' storage,
  // and what a failed attempt wrote was rolled back, so nothing is stored twice. An input the
  // store rejects alone is logged and dropped (storing it again would fail again). When the store
  // is unavailable instead (down, restarting, unreachable, locked, full: src/store/store-errors.ts)
  // nothing is split or dropped: what is not stored yet goes back to the queue, which tries it
  // again after a backoff, in order, with what came meanwhile behind it. Resolves with that tail.
  const storeOrSplit = async (batch: EngineCallInput[]): Promise<EngineCallInput[]> => {
    let results: IngestResult[];
    try {
      results = await ingest.ingestBatch(batch);
    } catch (error) {
      if (isStoreUnavailable(error)) {
        unavailableError = error;
        return batch;
      }
      if (batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        const left = await storeOrSplit(batch.slice(0, half));
        if (left.length > 0) return [...left, ...batch.slice(half)];
        return storeOrSplit(batch.slice(half));
      }
      const input = batch[0]!;
      log?.error({ err: error, uniqueid: uniqueidOf(input) }, "call event not stored");
      measure.dropped("rejected", 1);
      return [];
    }
    report(batch, results);
    return [];
  };
  const timers = options.timers ?? systemTimers;
  const maxHeld = options.maxHeld ?? INGEST_MAX_HELD;
  const queue = new BatchQueue<EngineCallInput>({
    timers,
    ...(options.batch ?? INGEST_BATCH),
    backoffMs: INGEST_BACKOFF_MS,
    maxHeld,
    handle: async (batch) => {
      await loaded;
      const left = await storeOrSplit(batch);
      if (left.length > 0) {
        if (unavailableSince === null) {
          unavailableSince = timers.now();
          measure.storeUnavailable(true);
          log?.warn(
            { err: unavailableError, held: queue.size + left.length },
            "call events held: the store is unavailable; retrying with backoff",
          );
        }
      } else if (unavailableSince !== null) {
        // The store took a batch: what is still held goes next, in batches, as any backlog.
        log?.info(
          {
            seconds: (timers.now() - unavailableSince) / 1000,
            dropped: overflowed,
            held: queue.size,
          },
          "the store is available again: storing the held call events",
        );
        unavailableSince = null;
        overflowed = 0;
        measure.storeUnavailable(false);
      } else if (queue.size === 0) {
        overflowed = 0;
      }
      return left;
    },
    onDropped: (dropped, reason) => {
      if (reason === "closed") {
        measure.dropped("shutdown", dropped.length);
        log?.error(
          { count: dropped.length, first_uniqueid: uniqueidOf(dropped[0]!) },
          "call events not stored: the store was still unavailable at shutdown",
        );
        return;
      }
      measure.dropped("overflow", dropped.length);
      // Once per outage, not per event: a long outage drops one on every event that arrives.
      if (overflowed === 0) {
        log?.error(
          { max_held: maxHeld, first_uniqueid: uniqueidOf(dropped[0]!) },
          "call events dropped: more wait than the ingest holds while the store is unavailable (the oldest go)",
        );
      }
      overflowed += dropped.length;
    },
  });
  const enqueue = (input: EngineCallInput) => queue.push(input);

  // Registration changes are stored in the engine's order (a contact's appearance before its
  // Removed), held through a store outage as the call events are (src/api/registration-storing.ts).
  const registrations = startRegistrationStoring({
    contacts: new RegistrationIngest({ db: options.db, clock: options.clock, orgs }),
    trunks: new TrunkRegistrationIngest({ db: options.db, clock: options.clock, orgs }),
    loaded,
    timers,
    backoffMs: INGEST_BACKOFF_MS,
    measure,
    logger: log,
    maxHeld: options.maxRegistrationsHeld,
  });
  const contact = (change: ContactChange) => registrations.contact(change);
  const trunks = (listed: OutboundRegistration[]) => registrations.trunks(listed);

  // Several replicas follow one engine; only the ingest-lease holder stores. A standby keeps what
  // it received for a while, so a failover stores what arrived between the owner's death and the
  // takeover: the ingest is idempotent by (uniqueid, sequence) and registration changes are
  // stored as states, so a replay of something already stored adds nothing.
  let ingesting = !options.standby;
  const windowMs = options.standbyWindowMs ?? 15_000;
  const standby: { at: number; store: () => void }[] = [];
  const store = (run: () => void) => {
    if (ingesting) return run();
    const at = options.clock().getTime();
    standby.push({ at, store: run });
    while (standby.length > 0 && standby[0]!.at < at - windowMs) standby.shift();
  };

  const reported = new Set<string>();
  const handlers: CallEventHandlers = {
    cdr: (record) => store(() => enqueue({ kind: "record", record })),
    journey: (event) => store(() => enqueue({ kind: "event", event })),
    contact: (change) => store(() => contact(change)),
    trunks: (listed) => store(() => trunks(listed)),
    channel: (event, snapshot) => live.channelEvent(event, snapshot),
    resync: (channels) => live.resync(channels),
    lost: () => live.lost(),
    problem: (message, fields) => {
      // A misconfigured engine says the same thing on every event: log each message once.
      if (!fields && reported.has(message)) return;
      if (!fields) reported.add(message);
      log?.warn(fields ?? {}, message);
    },
  };
  let connection: AmiConnection | null = null;
  let unfollow = () => {};
  if (options.ami) {
    connection = new AmiConnection({
      ...options.ami,
      events: true,
      ...(options.instruments ? { instruments: options.instruments.ami } : {}),
      ...(log
        ? { log: (message, fields) => log.info(fields ?? {}, `call events: ${message}`) }
        : {}),
    });
    unfollow = followCallEvents(connection, handlers);
    connection.start();
  }
  const idle = async () => {
    await loaded;
    await Promise.all([queue.flush(), registrations.flush()]);
  };
  // What is held is tried once more, now; what the store still refuses stays held (retried
  // after its backoff) instead of making the caller wait for an outage to end.
  const tryHeldNow = async () => {
    await loaded;
    await Promise.all([queue.tryNow(), registrations.tryNow()]);
  };
  // Call control is the engine adapter; what its refusals mean is the domain's.
  const control = connection && amiCallControl(connection, refusalError);
  return {
    live,
    control,
    ingest,
    connection,
    feed: (event) => dispatchCallEvent(event, handlers),
    feedTrunks: (listed) => store(() => trunks(listed)),
    idle,
    get ingesting() {
      return ingesting;
    },
    discardKept() {
      standby.splice(0);
    },
    takeOverIngest() {
      if (ingesting) return;
      const since = options.clock().getTime() - windowMs;
      // In the order received, before anything newer (this runs synchronously).
      for (const kept of standby.splice(0)) if (kept.at >= since) kept.store();
      ingesting = true;
    },
    async standByIngest() {
      ingesting = false;
      await tryHeldNow();
    },
    async stop() {
      unfollow();
      await connection?.close();
      // One more try, within a bound: a store that stays down (or hangs) must not hold the
      // shutdown. What is still held then is let go, counted and logged (onDropped, "closed").
      const waitMs = options.stopWaitMs ?? INGEST_STOP_MS;
      let limit: TimerHandle | null = null;
      const settled = await Promise.race([
        tryHeldNow().then(() => true),
        new Promise<boolean>((resolve) => {
          limit = timers.setTimer(waitMs, () => resolve(false));
        }),
      ]);
      (limit as TimerHandle | null)?.cancel();
      if (!settled) {
        // A batch may still be in the store's hands: it commits or rolls back on its own.
        log?.warn(
          { seconds: waitMs / 1000, held: queue.size },
          "call ingest stopped without waiting longer for the store",
        );
      }
      queue.close();
      registrations.close();
      if (unavailableSince !== null) {
        unavailableSince = null;
        measure.storeUnavailable(false);
      }
    },
  };
}
