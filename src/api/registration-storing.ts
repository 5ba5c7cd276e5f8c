// How the engine's registration changes reach the store (call tracking's part for phones and
// trunks, src/api/call-tracking.ts). A change lost in a store outage shows a phone or trunk wrong
// until its next REGISTER (often an hour): presence, registration status and the calls routed by
// it. So, as the call events do, changes are held while the store is unavailable
// (src/store/store-errors.ts) and tried again with the same backoff on the injected timers:
// - contact changes, one transaction each, in the engine's order (a contact's appearance before
//   its Removed), at most REGISTRATION_MAX_HELD held; beyond it the oldest go, counted;
// - trunk registration lists: each is the engine's whole list, so while held only the newest is
//   kept (the latest state per trunk is what matters; a transition within an outage may emit no
//   webhook).
// A change the store rejects (not an outage) is logged and dropped: trying it again fails again.
import type { Logger } from "pino";
import type { Timers } from "../clock.js";
import { BatchQueue } from "../domain/calls/batch-queue.js";
import type { RegistrationIngest } from "../domain/calls/registration-ingest.js";
import type { TrunkRegistrationIngest } from "../domain/calls/trunk-registration-ingest.js";
import type { ContactChange, OutboundRegistration } from "../engine/registration-events.js";
import type { CallIngestInstruments } from "../metrics/instruments.js";
import { isStoreUnavailable } from "../store/store-errors.js";

/**
 * The most contact changes held while the store is unavailable: a 10,000-phone PBX whose every
 * phone registered and unregistered twice, about 15 MB (a change held is ~350 bytes). Beyond it
 * the oldest go, counted in pbx_registration_changes_dropped_total{reason="overflow"}.
 */
export const REGISTRATION_MAX_HELD = 40_000;
/** Changes stored per turn of the queue (each in its own transaction, as the engine sent it). */
const CHANGES_PER_TURN = 100;

export interface RegistrationStoringOptions {
  contacts: RegistrationIngest;
  trunks: TrunkRegistrationIngest;
  /** Resolves when the orgs are loaded (changes wait for it). */
  loaded: Promise<void>;
  timers: Timers;
  backoffMs: { first: number; max: number };
  measure: CallIngestInstruments;
  logger?: Logger | undefined;
  /** The most contact changes held (default REGISTRATION_MAX_HELD). */
  maxHeld?: number | undefined;
}

export interface RegistrationStoring {
  contact(change: ContactChange): void;
  trunks(listed: OutboundRegistration[]): void;
  /** Resolves once everything received so far is stored (through an outage: it waits). */
  flush(): Promise<void>;
  /** Tries what is held once more, now; what the store still refuses stays held. */
  tryNow(): Promise<void>;
  /** Stops; what is still held is let go, counted and logged. */
  close(): void;
}

type Kind = "contact" | "trunks";

export function startRegistrationStoring(options: RegistrationStoringOptions): RegistrationStoring {
  const log = options.logger;
  const maxHeld = options.maxHeld ?? REGISTRATION_MAX_HELD;
  /** Per kind, whether its changes are held (for one log line when it begins and ends). */
  const held: Record<Kind, boolean> = { contact: false, trunks: false };
  /** Contact changes let go for the cap since the outage began: logged when the first goes. */
  let overflowed = 0;

  const outageBegan = (kind: Kind, error: unknown, count: number) => {
    if (held[kind]) return;
    held[kind] = true;
    log?.warn(
      { err: error, kind, held: count },
      "registration changes held: the store is unavailable; retrying with backoff",
    );
  };
  const outageEnded = (kind: Kind) => {
    if (!held[kind]) return;
    held[kind] = false;
    if (kind === "contact") overflowed = 0;
    log?.info({ kind }, "the store is available again: registration changes stored");
  };

  /**
   * Stores `batch` in order, one change at a time; answers the tail not stored because the store
   * is unavailable (held and tried again), logging and dropping a change it rejects.
   */
  async function storeInOrder<T>(
    kind: Kind,
    batch: T[],
    store: (item: T) => Promise<unknown>,
    describe: (item: T) => Record<string, unknown>,
    queued: () => number,
  ): Promise<T[]> {
    await options.loaded;
    for (const [i, item] of batch.entries()) {
      try {
        await store(item);
      } catch (error) {
        if (isStoreUnavailable(error)) {
          outageBegan(kind, error, queued() + batch.length - i);
          return batch.slice(i);
        }
        log?.error(
          { err: error, ...describe(item) },
          kind === "contact" ? "contact change not stored" : "trunk registrations not stored",
        );
        options.measure.registrationsDropped(kind, "rejected", 1);
      }
    }
    outageEnded(kind);
    return [];
  }

  const contacts: BatchQueue<ContactChange> = new BatchQueue<ContactChange>({
    timers: options.timers,
    maxBatch: CHANGES_PER_TURN,
    maxDelayMs: 0,
    backoffMs: options.backoffMs,
    maxHeld,
    handle: (batch) =>
      storeInOrder(
        "contact",
        batch,
        (change) => options.contacts.ingest(change),
        (change) => ({ aor: change.aor }),
        () => contacts.size,
      ),
    onDropped: (dropped, reason) => {
      const first = dropped[0]!;
      if (reason === "closed") {
        options.measure.registrationsDropped("contact", "shutdown", dropped.length);
        log?.error(
          { count: dropped.length, first_aor: first.aor },
          "contact changes not stored: the store was still unavailable at shutdown",
        );
        return;
      }
      options.measure.registrationsDropped("contact", "overflow", dropped.length);
      // Once per outage, not per change.
      if (overflowed === 0) {
        log?.error(
          { max_held: maxHeld, first_aor: first.aor },
          "contact changes dropped: more wait than are held while the store is unavailable (the oldest go)",
        );
      }
      overflowed += dropped.length;
    },
  });

  const trunkLists: BatchQueue<OutboundRegistration[]> = new BatchQueue<OutboundRegistration[]>({
    timers: options.timers,
    maxBatch: CHANGES_PER_TURN,
    maxDelayMs: 0,
    backoffMs: options.backoffMs,
    // A list is the engine's whole state of its outbound registrations: the newest replaces
    // what is held, so an outage holds one list, however long it lasts.
    supersedes: true,
    handle: (batch) =>
      storeInOrder(
        "trunks",
        batch,
        (listed) => options.trunks.ingest(listed),
        (listed) => ({ registrations: listed.length }),
        () => trunkLists.size,
      ),
    onDropped: (dropped) => {
      // Only a close lets a list go (supersedes bounds what is held).
      options.measure.registrationsDropped("trunks", "shutdown", dropped.length);
      log?.error(
        { count: dropped.length },
        "trunk registrations not stored: the store was still unavailable at shutdown",
      );
    },
  });

  return {
    contact: (change) => contacts.push(change),
    trunks: (listed) => trunkLists.push(listed),
    async flush() {
      await options.loaded;
      await Promise.all([contacts.flush(), trunkLists.flush()]);
    },
    async tryNow() {
      await options.loaded;
      await Promise.all([contacts.tryNow(), trunkLists.tryNow()]);
    },
    close() {
      contacts.close();
      trunkLists.close();
      held.contact = false;
      held.trunks = false;
    },
  };
}
