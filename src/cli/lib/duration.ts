// A duration flag as an operator types it: `90s`, `15m`, `2h`, or bare seconds.

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** Whole seconds of `text`, or null when it is not a duration. */
export function parseDurationSeconds(text: string): number | null {
  const match = /^(\d{1,6})(s|m|h)?$/.exec(text.trim());
  if (!match) return null;
  return Number(match[1]) * UNIT_SECONDS[match[2] ?? "s"]!;
}
