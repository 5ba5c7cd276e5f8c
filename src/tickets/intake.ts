// The auto-ticket intake (SPEC.md §4.7): a call POSTed by the poller is stored at once (one row
// per org and linkedid, so a repeated POST changes nothing) and classified in the background:
// the table of classify.ts, the AI-agent extensions from the cached lookup, the 8 s wait before
// a bot-dropped ticket (§8), and the repeat caller, whose open ticket becomes `urgent` instead of
// a new one. Calls accepted but not classified when the process stopped are classified on the
// next start.

import type { Clock } from "../clock.js";
import { systemTimers, type TimerHandle, type Timers } from "../clock.js";
import { openTicketForCall } from "../domain/tickets/tickets.js";
import { noInstruments, type TicketInstruments } from "../metrics/instruments.js";
import type { Db } from "../store/database.js";
import { createTicketIntakeRepository } from "../store/ticket-intake-repository.js";
import { createTicketRepository } from "../store/ticket-repository.js";
import type { BotExtensions } from "./bot-extensions.js";
import { classifyCall, type IntakeCall } from "./classify.js";
import { silentLogger, type TicketLogger } from "./logger.js";

/** How long an AI agent's call waits for a ticket of its own before `bot_dropped` (§8). */
export const BOT_DROPPED_WAIT_MS = 8000;

export interface IntakeOptions {
  db: Db;
  clock: Clock;
  bots: BotExtensions;
  timers?: Timers;
  logger?: TicketLogger;
  botWaitMs?: number;
  /** Told when a message outbox row may be due (a new ticket). */
  onTicket?: () => void;
  /** Tickets opened by source (src/metrics). */
  instruments?: TicketInstruments;
}

export interface TicketIntake {
  /** Stores the call (once per org and linkedid) and classifies it in the background. */
  receive(orgId: string, call: IntakeCall): Promise<{ accepted: boolean }>;
  /** Classifies what an earlier process accepted and left unclassified. */
  start(): Promise<void>;
  /** Cancels waits (their calls stay pending for the next start) and waits for work in flight. */
  stop(): Promise<void>;
  /** Resolves when no classification is running or waiting (tests). */
  idle(): Promise<void>;
}

export function createTicketIntake(options: IntakeOptions): TicketIntake {
  const { db, clock, bots } = options;
  const timers = options.timers ?? systemTimers;
  const logger = options.logger ?? silentLogger;
  const waitMs = options.botWaitMs ?? BOT_DROPPED_WAIT_MS;
  const intake = createTicketIntakeRepository(db);
  const work = new Set<Promise<void>>();
  const waits = new Map<TimerHandle, () => void>();
  let stopped = false;

  class Cancelled extends Error {}

  function wait(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const handle = timers.setTimer(
        ms,
        () => {
          waits.delete(handle);
          resolve();
        },
        { background: true },
      );
      waits.set(handle, () => reject(new Cancelled()));
    });
  }

  async function decide(
    orgId: string,
    call: IntakeCall,
  ): Promise<{ outcome: string; ticketId: string | null }> {
    const classification = classifyCall(call, await bots.of(orgId));
    if (classification.kind === "skip") return { outcome: classification.reason, ticketId: null };
    if (classification.kind === "bot_candidate") {
      await wait(waitMs);
      const tickets = createTicketRepository(db);
      if (await tickets.existsForPhoneSince(orgId, call.src, call.calldate)) {
        return { outcome: "bot_ticket_exists", ticketId: null };
      }
    }
    const source = classification.kind === "ticket" ? classification.source : "bot_dropped";
    const opened = await openTicketForCall(
      { db, clock },
      { orgId, source, phone: call.src, channelId: call.channel, linkedid: call.linkedid },
    );
    options.onTicket?.();
    if (opened.outcome === "created") (options.instruments ?? noInstruments.tickets).opened(source);
    return {
      outcome: opened.outcome === "created" ? source : "repeat_caller",
      ticketId: opened.ticket.id,
    };
  }

  async function classify(orgId: string, call: IntakeCall): Promise<void> {
    try {
      const { outcome, ticketId } = await decide(orgId, call);
      await intake.decide(orgId, call.linkedid, outcome, ticketId, clock().toISOString());
      logger.info(
        { org_id: orgId, linkedid: call.linkedid, outcome, ticket_id: ticketId },
        "auto-ticket intake",
      );
    } catch (error) {
      if (error instanceof Cancelled) return;
      // Left pending: the next start classifies it again.
      logger.error(
        { err: error, org_id: orgId, linkedid: call.linkedid },
        "auto-ticket intake failed",
      );
    }
  }

  function inBackground(orgId: string, call: IntakeCall): void {
    const running = classify(orgId, call);
    work.add(running);
    void running.finally(() => work.delete(running));
  }

  return {
    async receive(orgId, call) {
      const accepted = await intake.accept(
        orgId,
        call.linkedid,
        JSON.stringify(call),
        clock().toISOString(),
      );
      if (accepted && !stopped) inBackground(orgId, call);
      return { accepted };
    },

    async start() {
      stopped = false;
      for (const row of await intake.pending()) {
        inBackground(row.org_id, JSON.parse(row.payload) as IntakeCall);
      }
    },

    async stop() {
      stopped = true;
      for (const [handle, cancel] of waits) {
        handle.cancel();
        cancel();
      }
      waits.clear();
      await Promise.allSettled([...work]);
    },

    async idle() {
      while (work.size > 0) await Promise.allSettled([...work]);
    },
  };
}
