// The server's call tracking: the engine's call events (a sibling AMI connection with events on)
// feed call-record ingest, the live-call registry and the phones' registration webhooks. Wired
// here, beside the deploy engine, because it joins the engine layer (events) to the domain
// (ingest, rule 3, live calls).
import type { Logger } from "pino";
import type { Clock } from "../clock.js";
import type { CallControlPort } from "../domain/call-control.js";
import { CallIngest, type EngineCallInput, type IngestResult } from "../domain/call-ingest.js";
import { RefreshingOrgDirectory } from "../domain/call-org.js";
import { CHANNEL_GONE, type ControlAction, refusalError } from "../domain/engine-refusals.js";
import { LiveCalls } from "../domain/live-calls.js";
import { RegistrationIngest } from "../domain/registration-ingest.js";
import { TrunkRegistrationIngest } from "../domain/trunk-registration-ingest.js";
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

/** How the engine answers an action on a channel that is gone (recorded: fixtures/ami/call-control.json). */
/** Throws the documented error for an engine refusal of `action` (src/domain/engine-refusals.ts). */
function expectSuccess(answer: AmiMessage, action: ControlAction): void {
  if (String(answer.response ?? "").toLowerCase() !== "error") return;
  throw refusalError(action, String(answer.message ?? ""));
}

/** Most inputs written in one transaction: a burst costs a few commits, not one per event. */
const BATCH = 500;

export interface CallTrackingOptions {
  db: Db;
  clock: Clock;
  logger?: Logger;
  /** The engine's AMI (PBX_AMI_*); without it nothing is followed and `feed` is the only input. */
  ami?: AmiConnectionOptions;
  /** Called after each record or journey event is ingested (stored, a replay, or of no org). */
  onIngested?: (input: EngineCallInput, result: IngestResult) => void;
  /** Ingest counts and lag, and the events connection's state (src/metrics). */
  instruments?: { calls: CallIngestInstruments; ami: AmiInstruments };
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
  /** Resolves once everything received so far is stored. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** Builds call tracking and, with `ami`, starts following the engine. */
export function startCallTracking(options: CallTrackingOptions): CallTracking {
  const orgs = new RefreshingOrgDirectory({
    list: () => listOrgMarkers(options.db),
    generation: () => orgMarkerGeneration(options.db),
  });
  const ingest = new CallIngest({ db: options.db, clock: options.clock, orgs });
  const live = new LiveCalls((evidence) => orgs.orgOfKnown(evidence), options.clock);
  const log = options.logger;
  const loaded = orgs.refresh().catch((error: unknown) => {
    log?.error({ err: error }, "loading orgs for call ingest failed");
  });

  // Inputs are stored in the order the engine sent them, in batches of what has piled up.
  const pending: EngineCallInput[] = [];
  let draining: Promise<void> | null = null;
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
  const drain = async () => {
    await loaded;
    while (pending.length > 0) {
      const batch = pending.splice(0, BATCH);
      try {
        report(batch, await ingest.ingestBatch(batch));
      } catch {
        // One bad input must not cost the others: store them one by one.
        for (const input of batch) {
          try {
            report([input], await ingest.ingestBatch([input]));
          } catch (error) {
            const id = input.kind === "record" ? input.record.uniqueid : input.event.uniqueid;
            log?.error({ err: error, uniqueid: id }, "call event not stored");
          }
        }
      }
    }
    draining = null;
  };
  const enqueue = (input: EngineCallInput) => {
    pending.push(input);
    draining ??= drain();
  };

  // Registration changes are stored one after the other, in the engine's order (a contact's
  // appearance before its Removed).
  const registrations = new RegistrationIngest({ db: options.db, clock: options.clock, orgs });
  let registering: Promise<void> = Promise.resolve();
  const contact = (change: ContactChange) => {
    registering = registering
      .then(() => loaded)
      .then(() => registrations.ingest(change))
      .then(
        () => {},
        (error: unknown) =>
          log?.error({ err: error, aor: change.aor }, "contact change not stored"),
      );
  };

  // The trunks' registration lists, stored in the order they were read, after the contacts.
  const trunkRegistrations = new TrunkRegistrationIngest({
    db: options.db,
    clock: options.clock,
    orgs,
  });
  const trunks = (listed: OutboundRegistration[]) => {
    registering = registering
      .then(() => loaded)
      .then(() => trunkRegistrations.ingest(listed))
      .then(
        () => {},
        (error: unknown) => log?.error({ err: error }, "trunk registrations not stored"),
      );
  };

  const reported = new Set<string>();
  const handlers: CallEventHandlers = {
    cdr: (record) => enqueue({ kind: "record", record }),
    journey: (event) => enqueue({ kind: "event", event }),
    contact,
    trunks,
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
    while (draining) await draining;
    for (let last: Promise<void> | null = null; last !== registering; ) {
      last = registering;
      await last;
    }
  };
  const events = connection;
  const control: CallControlPort | null = events && {
    async hangup(channel) {
      const answer = await events.action({ Action: "Hangup", Channel: channel });
      // A channel that hung up meanwhile is what was asked for.
      if (CHANNEL_GONE.test(String(answer.message ?? ""))) return;
      expectSuccess(answer, "Hangup");
    },
    async blindTransfer(channel, context, exten) {
      const answer = await events.action({
        Action: "BlindTransfer",
        Channel: channel,
        Context: context,
        Exten: exten,
      });
      // The call ended between the lookup and the action: answered like any call not live.
      expectSuccess(answer, "BlindTransfer");
    },
    async originate(request) {
      // Async: the answer says the engine queued the call, not that anyone picked up (a phone
      // may ring for its whole ring time; the API must not wait for it).
      const answer = await events.action({
        Action: "Originate",
        Channel: request.channel,
        Context: request.context,
        Exten: request.exten,
        Priority: "1",
        CallerID: request.callerId,
        Account: request.account,
        ChannelId: request.channelId,
        OtherChannelId: request.otherChannelId,
        Timeout: String(request.timeoutMs),
        Async: "true",
        // One header, comma-separated (Asterisk splits Variable values on commas); every
        // value was checked to be digits, `+` or a uuid before it got here.
        Variable: Object.entries(request.variables)
          .map(([name, value]) => `${name}=${value}`)
          .join(","),
      });
      expectSuccess(answer, "Originate");
    },
    async getVariable(channel, name) {
      const answer = await events.action({ Action: "Getvar", Channel: channel, Variable: name });
      if (CHANNEL_GONE.test(String(answer.message ?? ""))) return null;
      expectSuccess(answer, "Getvar");
      const value = answer.value;
      return typeof value === "string" ? value : "";
    },
    async setVariable(channel, name, value) {
      const answer = await events.action({
        Action: "Setvar",
        Channel: channel,
        Variable: name,
        Value: value,
      });
      expectSuccess(answer, "Setvar");
    },
    async redirect(channel, to, extra) {
      const answer = await events.action({
        Action: "Redirect",
        Channel: channel,
        Context: to.context,
        Exten: to.exten,
        Priority: "1",
        ExtraChannel: extra.channel,
        ExtraContext: extra.to.context,
        ExtraExten: extra.to.exten,
        ExtraPriority: "1",
      });
      expectSuccess(answer, "Redirect");
    },
    async bridge(channel1, channel2) {
      const answer = await events.action({
        Action: "Bridge",
        Channel1: channel1,
        Channel2: channel2,
        Tone: "no",
      });
      if (CHANNEL_GONE.test(String(answer.message ?? ""))) return false;
      expectSuccess(answer, "Bridge");
      return true;
    },
  };
  return {
    live,
    control,
    ingest,
    connection,
    feed: (event) => dispatchCallEvent(event, handlers),
    feedTrunks: trunks,
    idle,
    async stop() {
      unfollow();
      await connection?.close();
      await idle();
    },
  };
}
