// Delivery policy: the controls of a webhook, their defaults and bounds (SPEC.md leaves them open; these are ours and
// docs/webhooks.md repeats them), the retry schedule of SPEC.md §6/§8 and the deactivation rule.

/** Retries after a failed attempt (so attempts = retry_count + 1). */
export const RETRY_COUNT = { default: 5, min: 0, max: 10 } as const;

/** Per-attempt timeout in milliseconds (connect + response headers + body). */
export const TIMEOUT_MS = { default: 5000, min: 1000, max: 30000 } as const;

/** Seconds to wait before retry n (n = 1..); retries beyond the fifth wait 300 s each. */
export const RETRY_SCHEDULE_SECONDS = [1, 5, 15, 60, 300] as const;

/** A `Retry-After` longer than this is capped, so a receiver cannot park an event for days. */
export const MAX_RETRY_AFTER_SECONDS = 3600;

/**
 * After this many deliveries in a row end `failed` (every retry exhausted), the webhook is
 * deactivated (`deactivated_reason: "too_many_failures"`). Counting finished deliveries rather
 * than attempts means an outage shorter than the retry window never deactivates anything.
 */
export const DEACTIVATE_AFTER_FAILED_DELIVERIES = 50;

/** Secret length bounds (characters). */
export const SECRET_LENGTH = { min: 16, max: 256 } as const;

/** Longest accepted URL. */
export const URL_MAX_LENGTH = 2048;

/** How much of a receiver's answer is kept in `last_error` for debugging. */
export const ERROR_TEXT_MAX = 500;

/** Delay before retry number `retry` (1-based), in milliseconds. */
export function scheduledRetryDelayMs(retry: number): number {
  const index = Math.min(Math.max(retry, 1), RETRY_SCHEDULE_SECONDS.length) - 1;
  return (RETRY_SCHEDULE_SECONDS[index] ?? 300) * 1000;
}

/**
 * An attempt's claim lasts its webhook's timeout plus this: long enough to send and record it,
 * short enough that a replica killed mid-attempt delays the row's retry by seconds, not minutes.
 */
export const CLAIM_LEASE_MARGIN_MS = 5000;
