// Sends the ticket messages the outbox holds (ticket-opened provider messages, workflow
// triggers, alerts): a provider message is `POST {base_url}/{phone_number_id}/messages` with
// `Authorization: Bearer <access token>` and the stored JSON body (the WhatsApp Business Cloud
// API shape); a workflow trigger is a POST of its stored body to its URL. A failed send is
// retried after 1, 5, 15, 60 and 300 s (SPEC.md §8's webhook schedule), then marked failed.
// Clock and timers are injected; `runDue()` sends what is due now (tests, and every look).
import type { Clock } from "../clock.js";
import { systemTimers, type TimerHandle, type Timers } from "../clock.js";
import { decrypt } from "../domain/secrets.js";
import { providerMessagesUrl } from "../domain/tickets/ticket-messaging.js";
import { createHttpPost, type HttpPost } from "../http-post.js";
import {
  type AttemptResult,
  attemptResultOf,
  failedAttemptResult,
  noInstruments,
  type OutboxInstruments,
} from "../metrics/instruments.js";
import type { TicketMessage } from "../model/tickets.js";
import type { Db } from "../store/database.js";
import { createTicketMessageRepository } from "../store/ticket-message-repository.js";
import { silentLogger, type TicketLogger } from "./logger.js";

const RETRY_SECONDS = [1, 5, 15, 60, 300];
const POLL_MS = 1000;

/** One POST: resolves with the status, rejects when there is no answer. */
export type MessagePost = HttpPost;

/** Provider and workflow URLs come from users: a redirect is never followed. */
export const fetchMessagePost: MessagePost = createHttpPost({
  timeoutMs: 10_000,
  redirect: "manual",
});

export interface MessageDispatcher {
  runDue(): Promise<number>;
  start(): void;
  wake(): void;
  stop(): Promise<void>;
}

export function createMessageDispatcher(options: {
  db: Db;
  clock: Clock;
  serverKey: Buffer;
  post?: MessagePost;
  timers?: Timers;
  logger?: TicketLogger;
  /** Sends by result and delivery latency (src/metrics). */
  instruments?: OutboxInstruments;
}): MessageDispatcher {
  const { db, clock } = options;
  const post = options.post ?? fetchMessagePost;
  const timers = options.timers ?? systemTimers;
  const logger = options.logger ?? silentLogger;
  const measure = options.instruments ?? noInstruments.ticketMessages;
  const messages = createTicketMessageRepository(db);
  let running = false;
  let timer: TimerHandle | null = null;
  let current: Promise<unknown> | null = null;

  async function target(
    row: TicketMessage,
  ): Promise<{ url: string; headers: Record<string, string> } | string> {
    const json = { "content-type": "application/json" };
    if (row.kind === "workflow") {
      return row.target_url ? { url: row.target_url, headers: json } : "workflow has no URL";
    }
    const provider = await messages.provider();
    if (!provider?.access_token) return "messaging provider not configured";
    return {
      url: providerMessagesUrl(provider.base_url, provider.phone_number_id),
      headers: {
        authorization: `Bearer ${decrypt(provider.access_token, options.serverKey)}`,
        ...json,
      },
    };
  }

  async function send(row: TicketMessage): Promise<void> {
    const attempts = row.attempts + 1;
    // Claimed for a minute: a process that dies mid-send leaves the row due again after it.
    const lease = new Date(clock().getTime() + 60_000).toISOString();
    if (!(await messages.claim(row.id, row.attempts, lease))) return;
    let status: number | null = null;
    let problem: string | null = null;
    // Nothing sent (no URL, no provider): counted as an error.
    let result: AttemptResult = "error";
    const to = await target(row);
    if (typeof to === "string") problem = to;
    else {
      try {
        status = await post(to.url, row.body, to.headers);
        result = attemptResultOf(status);
        if (status < 200 || status >= 300) problem = `answered ${status}`;
      } catch (error) {
        result = failedAttemptResult(error);
        problem = error instanceof Error ? error.message : String(error);
      }
    }
    const now = clock();
    measure.attempt(
      result,
      problem === null ? (now.getTime() - Date.parse(row.created_at)) / 1000 : null,
    );
    const delay = RETRY_SECONDS[attempts - 1];
    await messages.record(row.id, {
      status: problem === null ? "sent" : delay === undefined ? "failed" : "pending",
      attempts,
      lastStatus: status,
      lastError: problem,
      nextAttemptAt: new Date(now.getTime() + (delay ?? 0) * 1000).toISOString(),
      at: now.toISOString(),
    });
    if (problem !== null) {
      logger.error({ message_id: row.id, kind: row.kind, error: problem }, "ticket message failed");
    }
  }

  async function runDue(): Promise<number> {
    let count = 0;
    for (;;) {
      const due = await messages.due(clock().toISOString(), 50);
      if (due.length === 0) return count;
      for (const row of due) await send(row);
      count += due.length;
    }
  }

  function look(): void {
    if (!running || current) return;
    timer?.cancel();
    timer = null;
    current = runDue()
      .catch((error: unknown) => logger.error({ err: error }, "ticket message outbox failed"))
      .finally(() => {
        current = null;
        if (running) timer = timers.setTimer(POLL_MS, look, { background: true });
      });
  }

  return {
    runDue,
    start() {
      running = true;
      look();
    },
    wake: look,
    async stop() {
      running = false;
      timer?.cancel();
      timer = null;
      await current;
    },
  };
}
