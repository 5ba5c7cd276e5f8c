// The engine's call events from one AMI connection with events on (a sibling of the deployer's,
// which asks for none): `Cdr` events as CdrRecords, channel events as snapshots, and after every
// login the engine's own channel list (`CoreShowChannels`), since events were missed while the
// connection was down. Channel events that arrive while that list is being read are held and
// applied after it, so a channel created meanwhile is not lost.
import type { AmiConnection, AmiMessage } from "./ami-connection.js";
import {
  type CdrRecord,
  type ChannelSnapshot,
  channelSnapshotOf,
  isJourneyEvent,
  type JourneyEvent,
  journeyEventOf,
  parseCdrEvent,
} from "./call-events.js";
import {
  type ContactChange,
  contactChangeOf,
  isOutboundRegistryEvent,
  LIST_OUTBOUND_REGISTRATIONS,
  type OutboundRegistration,
  outboundRegistrationOf,
} from "./registration-events.js";

export interface ListedChannelSnapshot extends ChannelSnapshot {
  upSeconds: number;
}

export interface CallEventHandlers {
  cdr(record: CdrRecord): void;
  /** A step of a call for its journey (dial, bridge, queue, hangup...), with the engine's time. */
  journey(event: JourneyEvent): void;
  /** `event` is the AMI event name in lower case (`newchannel`, `newstate`, `hangup`, ...). */
  channel(event: string, snapshot: ChannelSnapshot): void;
  /** A phone's contact was reported present or removed (PJSIP `ContactStatus`). */
  contact?(change: ContactChange): void;
  /** An outbound registration changed status (PJSIP `Registry`): it names no registration. */
  registry?(): void;
  /** The engine's whole list of outbound registrations, read after each `Registry` and login. */
  trunks?(registrations: OutboundRegistration[]): void;
  /** The engine's channels right after a (re)connect: replaces what was known. */
  resync(channels: ListedChannelSnapshot[]): void;
  /** The connection dropped: channel state is unknown until the next resync. */
  lost(): void;
  /** An event that could not be used, or a failed resync. */
  problem(message: string, fields?: Record<string, unknown>): void;
}

// Events with a channel snapshot that say nothing about the channel's life: a record, the
// answer to an originate, list items (only read during a resync).
const NOT_CHANNEL_EVENTS = new Set([
  "cdr",
  "originateresponse",
  "coreshowchannel",
  "coreshowchannelscomplete",
]);

function upSeconds(event: AmiMessage): number {
  const match = /^(\d+):(\d{2}):(\d{2})$/.exec(String(event.duration ?? ""));
  if (!match) return 0;
  return Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
}

/**
 * Routes one AMI event to `handlers` (a record, a channel change, or nothing). The AMI feed and
 * the replay of recorded fixtures go through this same function.
 */
export function dispatchCallEvent(
  event: AmiMessage,
  handlers: Pick<
    CallEventHandlers,
    "cdr" | "channel" | "journey" | "problem" | "contact" | "registry"
  >,
): void {
  const name = String(event.event ?? "").toLowerCase();
  if (isOutboundRegistryEvent(event)) {
    handlers.registry?.();
    return;
  }
  if (name === "contactstatus") {
    const change = contactChangeOf(event);
    if (change) handlers.contact?.(change);
    return;
  }
  if (name === "cdr") {
    const parsed = parseCdrEvent(event);
    if ("record" in parsed) handlers.cdr(parsed.record);
    else handlers.problem(`Cdr event refused: ${parsed.problem}`, { uniqueid: event.uniqueid });
    return;
  }
  if (NOT_CHANNEL_EVENTS.has(name)) return;
  const snapshot = channelSnapshotOf(event);
  if (snapshot) handlers.channel(name, snapshot);
  if (isJourneyEvent(event)) {
    const step = journeyEventOf(event);
    if (step) handlers.journey(step);
    else if (!event.timestamp) {
      handlers.problem("journey event without Timestamp: manager.conf lacks timestampevents");
    }
  }
}

/** Feeds `handlers` from `connection` (which must ask for events) until the returned stop. */
export function followCallEvents(
  connection: AmiConnection,
  handlers: CallEventHandlers,
): () => void {
  let held: Array<[string, ChannelSnapshot]> | null = null;
  const routed = {
    ...handlers,
    channel(name: string, snapshot: ChannelSnapshot) {
      if (held) held.push([name, snapshot]);
      else handlers.channel(name, snapshot);
    },
  };
  const onEvent = (event: AmiMessage) => dispatchCallEvent(event, routed);

  // The outbound registrations' list, read once per burst of Registry events: a change that
  // arrives while it is being read asks for one more read after it.
  let listing = false;
  let listAgain = false;
  const listRegistrations = async () => {
    const report = handlers.trunks;
    if (!report) return;
    if (listing) {
      listAgain = true;
      return;
    }
    listing = true;
    try {
      do {
        listAgain = false;
        try {
          const items = await connection.listAction(
            { ...LIST_OUTBOUND_REGISTRATIONS.action },
            LIST_OUTBOUND_REGISTRATIONS.complete,
          );
          const listed: OutboundRegistration[] = [];
          for (const item of items) {
            const registration = outboundRegistrationOf(item);
            if (registration) listed.push(registration);
          }
          report(listed);
        } catch (error) {
          // With no registration at all Asterisk 22 still answers a list, an empty one
          // (fixtures/ami/session.json): an error here is a real problem.
          handlers.problem(`PJSIPShowRegistrationsOutbound failed: ${(error as Error).message}`);
        }
      } while (listAgain);
    } finally {
      listing = false;
    }
  };
  routed.registry = () => void listRegistrations();

  const resync = async () => {
    held = [];
    try {
      const items = await connection.listAction(
        { Action: "CoreShowChannels" },
        "CoreShowChannelsComplete",
      );
      const listed: ListedChannelSnapshot[] = [];
      for (const item of items) {
        const snapshot = channelSnapshotOf(item);
        if (snapshot) listed.push({ ...snapshot, upSeconds: upSeconds(item) });
      }
      handlers.resync(listed);
    } catch (error) {
      handlers.problem(`CoreShowChannels failed: ${(error as Error).message}`);
    } finally {
      const replay = held ?? [];
      held = null;
      for (const [name, snapshot] of replay) handlers.channel(name, snapshot);
    }
  };

  const stopEvents = connection.onEvent(onEvent);
  const stopLogins = connection.onLogin(() => {
    void resync();
    void listRegistrations();
  });
  const stopLost = connection.onLost(() => handlers.lost());
  if (connection.isReady) {
    void resync();
    void listRegistrations();
  }
  return () => {
    stopEvents();
    stopLogins();
    stopLost();
  };
}
