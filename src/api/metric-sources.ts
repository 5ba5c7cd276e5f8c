// The scrape-time gauges that read the store: the three outboxes' depth and oldest waiting row,
// and the ticket poller's lag. Wired here (the API's server wiring) so src/metrics needs no store.
import type { Clock } from "../clock.js";
import type { MetricSources, OutboxStats } from "../metrics/registry.js";
import type { Db } from "../store/database.js";
import {
  oldestUnpolledCallRecord,
  type WaitingRows,
  waitingIntakePosts,
  waitingTicketMessages,
  waitingWebhookDeliveries,
} from "../store/outbox-stats.js";

function ageSeconds(since: string | null, now: number): number {
  if (since === null) return 0;
  const at = Date.parse(since);
  return Number.isFinite(at) ? Math.max(0, (now - at) / 1000) : 0;
}

function statsOf(rows: WaitingRows, now: number): OutboxStats {
  return { depth: rows.depth, oldestSeconds: ageSeconds(rows.oldestCreatedAt, now) };
}

/** Outbox and poller gauges over `db`, aged by `clock`. */
export function storeMetricSources(
  db: Db,
  clock: Clock,
): Pick<MetricSources, "outboxes" | "pollerLagSeconds"> {
  return {
    async outboxes() {
      const [webhooks, messages, posts] = await Promise.all([
        waitingWebhookDeliveries(db),
        waitingTicketMessages(db),
        waitingIntakePosts(db),
      ]);
      const now = clock().getTime();
      return {
        webhooks: statsOf(webhooks, now),
        ticket_messages: statsOf(messages, now),
        intake_posts: statsOf(posts, now),
      };
    },
    async pollerLagSeconds() {
      return ageSeconds(await oldestUnpolledCallRecord(db), clock().getTime());
    },
  };
}
