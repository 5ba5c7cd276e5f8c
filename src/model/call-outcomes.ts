// How a call ended and which way it went, named once for the call records (engine ingest), the
// store, the API's filters and views, and the CLI's flags.

/** Asterisk's CDR dispositions (cdr.conf with `unanswered` and `congestion` on). */
export const CALL_DISPOSITIONS = ["ANSWERED", "NO ANSWER", "BUSY", "FAILED", "CONGESTION"] as const;
export type CallDisposition = (typeof CALL_DISPOSITIONS)[number];

/** Which way a call went, as the generated dialplan marks it. */
export const CALL_DIRECTIONS = ["inbound", "outbound", "internal"] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];

/** Whether `value` is one of the CDR dispositions. */
export function isCallDisposition(value: string): value is CallDisposition {
  return (CALL_DISPOSITIONS as readonly string[]).includes(value);
}
