// When to try again after a failed attempt: the schedule of SPEC.md §6 (1, 5, 15, 60, 300 s) up
// to the webhook's retry_count, never sooner than a 429/503 answer's Retry-After asks.
import { MAX_RETRY_AFTER_SECONDS, scheduledRetryDelayMs } from "./policy.js";

/** Milliseconds a `Retry-After` value (delta-seconds or HTTP date) asks for, capped; null if invalid. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (value === null) return null;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    ms = at - now.getTime();
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_SECONDS * 1000);
}

/**
 * Delay before the next attempt after attempt number `attemptsMade` failed, or null when the
 * webhook's retries are used up.
 */
export function nextRetryDelayMs(
  attemptsMade: number,
  retryCount: number,
  answer: { status: number | null; retryAfter: string | null },
  now: Date,
): number | null {
  if (attemptsMade > retryCount) return null;
  const scheduled = scheduledRetryDelayMs(attemptsMade);
  if (answer.status === 429 || answer.status === 503) {
    const asked = parseRetryAfter(answer.retryAfter, now);
    if (asked !== null) return Math.max(scheduled, asked);
  }
  return scheduled;
}
