// Pure rules: event types, URL guard, retry delays, secret masking and key mapping.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DomainError } from "../../src/domain/errors.js";
import { checkWebhookUrl, parseWebhookEvents } from "../../src/domain/webhooks/webhook-rules.js";
import { WEBHOOK_EVENTS } from "../../src/webhooks/events.js";
import { nextRetryDelayMs, parseRetryAfter } from "../../src/webhooks/retry.js";
import { maskSecret, standardWebhooksKey } from "../../src/webhooks/secrets.js";
import { isNonPublicAddress, PRIVATE_TARGET_MESSAGE } from "../../src/webhooks/url-guard.js";

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DomainError, `expected a domain error, got ${String(error)}`);
    return (error as Error).message;
  }
  throw new Error("expected a rejection");
}

function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a throw");
}

test("the 17 event types of SPEC §6 and the 3 of time conditions; ivr.* refused with its own message", () => {
  assert.is(WEBHOOK_EVENTS.length, 20);
  assert.equal(WEBHOOK_EVENTS.slice(17), [
    "time_condition.created",
    "time_condition.updated",
    "time_condition.deleted",
  ]);
  assert.equal(parseWebhookEvents(["call.ended", "crm.lead.created", "call.ended"]), [
    "call.ended",
    "crm.lead.created",
  ]);
  assert.is(
    thrown(() => parseWebhookEvents(["ivr.dtmf"])),
    "ivr.* events are not implemented",
  );
  assert.match(
    thrown(() => parseWebhookEvents(["call.exploded"])),
    "Unknown event type: call.exploded",
  );
  assert.is(
    thrown(() => parseWebhookEvents([])),
    "events must list at least one event type",
  );
});

test("URLs: http(s) only", async () => {
  const policy = { allowPrivate: true };
  assert.is(
    await rejection(checkWebhookUrl("ftp://example.com/x", policy)),
    "url must be an absolute http or https URL",
  );
  assert.is(
    await rejection(checkWebhookUrl("/relative", policy)),
    "url must be an absolute http or https URL",
  );
  assert.is(await checkWebhookUrl("http://127.0.0.1:9/x", policy), "http://127.0.0.1:9/x");
});

test("URLs: loopback, link-local, private and unique-local targets refused by default", async () => {
  const policy = { allowPrivate: false };
  for (const url of [
    "http://127.0.0.1/x",
    "http://10.1.2.3/x",
    "http://172.20.0.1/x",
    "http://192.168.1.1/x",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]/x",
    "http://[fe80::1]/x",
    "http://[fd12:3456::1]/x",
    "http://[::ffff:127.0.0.1]/x",
    "http://0.0.0.0/x",
    "http://localhost:8080/x",
    "http://api.localhost/x",
  ]) {
    const refused = await rejection(checkWebhookUrl(url, policy));
    assert.is(refused, PRIVATE_TARGET_MESSAGE, url);
    // The refusal names the switch that lifts it.
    assert.match(refused, "PBX_WEBHOOK_ALLOW_PRIVATE=1");
  }
  // A host name is not resolved when the webhook is saved (that works offline); it is resolved,
  // and every address checked, when a delivery connects (dispatcher-loop.test.ts).
  assert.is(
    await checkWebhookUrl("https://nowhere.invalid/x", policy),
    "https://nowhere.invalid/x",
  );
  assert.ok(!isNonPublicAddress("8.8.8.8"));
  assert.ok(!isNonPublicAddress("2001:4860:4860::8888"));
});

test("retry delays follow 1, 5, 15, 60, 300 s up to retry_count", () => {
  const now = new Date("2026-03-01T00:00:00Z");
  const noAnswer = { status: null, retryAfter: null };
  const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => nextRetryDelayMs(n, 7, noAnswer, now));
  assert.equal(delays, [1000, 5000, 15000, 60000, 300000, 300000, 300000]);
  assert.is(nextRetryDelayMs(6, 5, noAnswer, now), null);
  assert.is(nextRetryDelayMs(1, 0, noAnswer, now), null);
});

test("Retry-After on 429/503 is honoured (never sooner than the schedule, capped at 1 h)", () => {
  const now = new Date("2026-03-01T00:00:00Z");
  assert.is(nextRetryDelayMs(1, 5, { status: 429, retryAfter: "120" }, now), 120_000);
  assert.is(nextRetryDelayMs(4, 5, { status: 503, retryAfter: "2" }, now), 60_000);
  assert.is(
    nextRetryDelayMs(1, 5, { status: 503, retryAfter: "Sun, 01 Mar 2026 00:10:00 GMT" }, now),
    600_000,
  );
  assert.is(nextRetryDelayMs(1, 5, { status: 500, retryAfter: "120" }, now), 1000);
  assert.is(parseRetryAfter("999999", now), 3_600_000);
  assert.is(parseRetryAfter("soon", now), null);
});

test("secrets are masked and mapped to Standard Webhooks keys", () => {
  assert.is(maskSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), "whsec_…LaSw");
  assert.is(maskSecret("my-own-secret-value-1234"), "…1234");
  assert.equal(
    standardWebhooksKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
    Buffer.from("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "base64"),
  );
  assert.equal(
    standardWebhooksKey("my-own-secret-value-1234"),
    Buffer.from("my-own-secret-value-1234"),
  );
});

test.run();
