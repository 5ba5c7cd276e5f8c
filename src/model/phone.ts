// Phone-number rules of the specification (SPEC.md §2 DID, §4.5 caller ID and gateway dispatch).
// Pure string functions: shared by validation, the compiler and the API's call operations.

/** The reserved, never-assigned number that stands in for any caller ID outside the owned range. */
export const SENTINEL_DID = "+918065978000";

/** The DID range this deployment owns upstream: 91806597 followed by 8000..8029. */
export const OWNED_RANGE = { prefix: "91806597", first: 8000, last: 8029 } as const;

/** Removes everything but digits. */
export function digitsOnly(value: string): string {
  return value.replace(/[^0-9]/g, "");
}

/** International digits (no `+`): an 11-digit number starting 0 is Indian local -> 91 + rest. */
export function internationalDigits(value: string): string {
  const digits = digitsOnly(value);
  if (digits.length === 11 && digits.startsWith("0")) return `91${digits.slice(1)}`;
  return digits;
}

/** E.164 with `+` (SPEC.md §4.5 rule 1: non-digits removed, `+` prepended). */
export function toE164(value: string): string {
  return `+${internationalDigits(value)}`;
}

/** Whether two ways of writing a number name the same line (local, international or E.164). */
export function sameNumber(a: string, b: string): boolean {
  return internationalDigits(a) === internationalDigits(b);
}

/** An Indian number in international form: 91 followed by 10 digits. */
export function isIndian(value: string): boolean {
  const intl = internationalDigits(value);
  return intl.length === 12 && intl.startsWith("91");
}

/**
 * Every form under which a DID can arrive from a carrier, in a stable order. Indian numbers get
 * the local (0 + 10 digits), international (91 + 10 digits) and E.164 aliases (SPEC.md §2).
 */
export function didAliases(value: string): string[] {
  const intl = internationalDigits(value);
  if (isIndian(intl)) return [`0${intl.slice(2)}`, intl, `+${intl}`];
  if (value.startsWith("+")) return [intl, `+${intl}`];
  return [intl];
}

/** Whether the number lies in the range this deployment owns upstream. */
export function inOwnedRange(value: string): boolean {
  const intl = internationalDigits(value);
  if (intl.length !== OWNED_RANGE.prefix.length + 4 || !intl.startsWith(OWNED_RANGE.prefix)) {
    return false;
  }
  const last4 = Number(intl.slice(-4));
  return last4 >= OWNED_RANGE.first && last4 <= OWNED_RANGE.last;
}

/**
 * SPEC.md §4.5 rule 5, the gateway range check: a number in the owned range passes as
 * `+<digits>`; anything else becomes the sentinel.
 */
export function gatewayRangeCheck(value: string): string {
  return inOwnedRange(value) ? `+${internationalDigits(value)}` : SENTINEL_DID;
}
