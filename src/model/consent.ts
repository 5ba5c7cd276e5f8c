// Recording consent (issue 16): the shape of a number whose owner refused to be recorded. The
// compiler lists refused numbers as dialplan extensions, so the pattern admits only `+` and
// digits: nothing from a consent record can add syntax to the dialplan.

/** E.164: `+`, a non-zero digit, then 6-14 digits. */
export const E164_PATTERN = "^\\+[1-9][0-9]{6,14}$";

export const RECORDING_CONSENT = ["given", "refused"] as const;
export type RecordingConsent = (typeof RECORDING_CONSENT)[number];

const E164 = new RegExp(E164_PATTERN);

/** Whether `value` is an E.164 number as consent records store it. */
export function isE164(value: string): boolean {
  return E164.test(value);
}
