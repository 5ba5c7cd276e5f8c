// The registry and the instruments: one registry per app, bounded labels, result classes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { attemptResultOf, failedAttemptResult } from "../../src/metrics/instruments.js";
import { createMetrics } from "../../src/metrics/registry.js";
import { attemptResult } from "../../src/webhooks/attempt.js";
import { PRIVATE_TARGET_MESSAGE } from "../../src/webhooks/url-guard.js";
import { Scrape } from "./scrape.js";

test("two apps in one process keep their own registries", async () => {
  const one = createMetrics();
  const two = createMetrics();
  one.instruments.deploys.failed();
  one.instruments.deploys.failed();
  two.instruments.deploys.failed();
  assert.is(new Scrape(await one.scrape()).value("pbx_deploy_failures_total"), 2);
  assert.is(new Scrape(await two.scrape()).value("pbx_deploy_failures_total"), 1);
});

test("an unknown HTTP method is OTHER, so a client cannot add label values", async () => {
  const metrics = createMetrics();
  for (const method of ["GET", "BREW", "PROPFIND"]) {
    metrics.instruments.http.started();
    metrics.instruments.http.finished("unmatched", method, 404, 0.001);
  }
  const scrape = new Scrape(await metrics.scrape());
  assert.is(scrape.value("pbx_http_request_duration_seconds_count", { method: "OTHER" }), 2);
  assert.is(scrape.value("pbx_http_request_duration_seconds_count", { method: "GET" }), 1);
  assert.is(scrape.value("pbx_http_requests_in_flight"), 0);
  assert.not.ok(scrape.text.includes("BREW"));
});

test("scrape-time gauges read their sources; outboxes are read once per scrape", async () => {
  const metrics = createMetrics();
  let reads = 0;
  metrics.watch({
    liveCalls: () => 3,
    pendingDeploys: () => ({ orgs: 2, oldestSeconds: 7.5 }),
    pollerLagSeconds: async () => 12,
    ready: async () => false,
    outboxes: async () => {
      reads++;
      return {
        webhooks: { depth: 4, oldestSeconds: 61 },
        ticket_messages: { depth: 0, oldestSeconds: 0 },
        intake_posts: { depth: 1, oldestSeconds: 2 },
      };
    },
  });
  const scrape = new Scrape(await metrics.scrape());
  assert.is(reads, 1);
  assert.is(scrape.value("pbx_live_calls"), 3);
  assert.is(scrape.value("pbx_deploy_orgs_pending"), 2);
  assert.is(scrape.value("pbx_deploy_oldest_pending_seconds"), 7.5);
  assert.is(scrape.value("pbx_ticket_poller_lag_seconds"), 12);
  assert.is(scrape.value("pbx_ready"), 0);
  assert.is(scrape.value("pbx_outbox_depth", { outbox: "webhooks" }), 4);
  assert.is(scrape.value("pbx_outbox_oldest_pending_seconds", { outbox: "webhooks" }), 61);
  assert.is(scrape.value("pbx_outbox_depth", { outbox: "intake_posts" }), 1);
});

test("retention, tickets and endpoints disabled count by their bounded label", async () => {
  const metrics = createMetrics();
  metrics.instruments.retention.purged("call_records", 40);
  metrics.instruments.retention.purged("call_records", 2);
  metrics.instruments.tickets.opened("missed_call");
  metrics.instruments.webhooks.endpointDisabled("gone");
  const scrape = new Scrape(await metrics.scrape());
  assert.is(scrape.value("pbx_retention_purged_total", { kind: "call_records" }), 42);
  assert.is(scrape.value("pbx_tickets_opened_total", { source: "missed_call" }), 1);
  assert.is(scrape.value("pbx_webhook_endpoints_disabled_total", { reason: "gone" }), 1);
});

test("attempt results: status classes, timeouts, the address guard's refusal", () => {
  assert.is(attemptResultOf(204), "2xx");
  assert.is(attemptResultOf(410), "4xx");
  assert.is(attemptResultOf(503), "5xx");
  assert.is(attemptResultOf(null), "error");
  const outcome = {
    id: "m_1",
    attempt: 1,
    ok: false,
    latencyMs: 1,
    retryAfter: null,
    sentAt: new Date(),
  };
  assert.is(attemptResult({ ...outcome, status: 500, error: "HTTP 500" }), "5xx");
  assert.is(
    attemptResult({ ...outcome, status: null, error: "timed out after 5000 ms" }),
    "timeout",
  );
  assert.is(attemptResult({ ...outcome, status: null, error: PRIVATE_TARGET_MESSAGE }), "refused");
  assert.is(attemptResult({ ...outcome, status: null, error: "ECONNREFUSED: connect" }), "error");
  const timeout = new Error("The operation was aborted due to timeout");
  timeout.name = "TimeoutError";
  assert.is(failedAttemptResult(timeout), "timeout");
  assert.is(failedAttemptResult(new Error("fetch failed")), "error");
});

test.run();
