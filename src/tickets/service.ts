// The ticket side of the server process: the intake (mounted under /events by the API), the
// call-record poller and the ticket message dispatcher, started after the server listens and
// stopped before the store closes.
import type { Clock } from "../clock.js";
import type { Instruments } from "../metrics/instruments.js";
import type { Db } from "../store/database.js";
import { cachedBotExtensions, httpBotExtensionLookup } from "./bot-extensions.js";
import { createTicketIntake, type TicketIntake } from "./intake.js";
import type { TicketLogger } from "./logger.js";
import { createMessageDispatcher, type MessageDispatcher } from "./messaging.js";
import { type CallRecordPoller, createCallRecordPoller } from "./poller.js";

export interface TicketService {
  intake: TicketIntake;
  /** Null when the process runs only the intake (`pbxctl intake serve`). */
  poller: CallRecordPoller | null;
  messages: MessageDispatcher;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface TicketServiceOptions {
  db: Db;
  clock: Clock;
  serverKey: Buffer;
  internalKey: string | null;
  /** The API's base URL (for the bot-extension lookup), known once the server listens. */
  apiUrl: () => string;
  /** `{events_url}` for the poller; null: no poller. */
  eventsUrl: (() => string) | null;
  logger: TicketLogger;
  /** Intake POSTs, ticket messages and tickets opened (src/metrics); default none. */
  instruments?: Pick<Instruments, "intakePosts" | "ticketMessages" | "tickets">;
}

export function createTicketService(options: TicketServiceOptions): TicketService {
  const messages = createMessageDispatcher({
    db: options.db,
    clock: options.clock,
    serverKey: options.serverKey,
    logger: options.logger,
    ...(options.instruments ? { instruments: options.instruments.ticketMessages } : {}),
  });
  const bots = cachedBotExtensions({
    lookup: httpBotExtensionLookup({ apiUrl: options.apiUrl, internalKey: options.internalKey }),
    clock: options.clock,
    onError: (orgId, error) =>
      options.logger.error({ err: error, org_id: orgId }, "bot-extension lookup failed"),
  });
  const intake = createTicketIntake({
    db: options.db,
    clock: options.clock,
    bots,
    logger: options.logger,
    onTicket: () => messages.wake(),
    ...(options.instruments ? { instruments: options.instruments.tickets } : {}),
  });
  const poller = options.eventsUrl
    ? createCallRecordPoller({
        db: options.db,
        clock: options.clock,
        eventsUrl: options.eventsUrl,
        internalKey: options.internalKey,
        logger: options.logger,
        ...(options.instruments ? { instruments: options.instruments.intakePosts } : {}),
      })
    : null;
  return {
    intake,
    poller,
    messages,
    async start() {
      await intake.start();
      messages.start();
      poller?.start();
    },
    async stop() {
      await poller?.stop();
      await intake.stop();
      await messages.stop();
    },
  };
}
