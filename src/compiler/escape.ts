// The only ways user text reaches generated files. Each function is tied to the place its output
// lands (ASTERISK.md "Files and includes" and "Dialplan"): comments, dialplan application
// arguments, PJSIP values. Numbers and identifiers are not escaped here: the schema holds them to
// their character set, and `assertToken` refuses anything else, so a bug cannot slip one through.

/**
 * Text for a `;` comment: one line, no control characters, and no `;` at all, since `;--` opens
 * a block comment that would swallow the configuration lines after it.
 */
export function commentText(value: string): string {
  if (!COMMENT_UNSAFE.test(value)) return value;
  return value
    .replace(/[\u0000-\u001f\u007f;]+/g, " ")
    .replace(/ {2,}/g, " ")
    .trim();
}

// Fast paths: nearly every value is already clean, and a test allocates nothing.
// Spaces are tidied only when something was replaced; a clean value is returned as it is.
const COMMENT_UNSAFE = /[\u0000-\u001f\u007f;]/;
const DIALPLAN_UNSAFE = /[^\p{L}\p{M}\p{N} ._'@:-]/u;

/**
 * Text placed inside a dialplan application argument (CALLERID(name), NoOp, queue member names).
 * Letters of any script, digits, space and `. _ - ' @ :` survive; everything that the dialplan
 * parser or the expression evaluator reads (`$ { } [ ] ( ) , ; | " \ ^ &` and control
 * characters) is replaced by a space, so no value can run a function or end an argument.
 */
export function dialplanText(value: string): string {
  if (!DIALPLAN_UNSAFE.test(value)) return value;
  return value
    .replace(/[^\p{L}\p{M}\p{N} ._'@:-]+/gu, " ")
    .replace(/ {2,}/g, " ")
    .trim();
}

/** A value after `key=` in pjsip.conf: `;` would start a comment, so it is written `\;`. */
export function pjsipValue(value: string): string {
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new Error("control character in a PJSIP value");
  return value.replace(/;/g, "\\;");
}

const TOKEN = /^[A-Za-z0-9_+*#.@:\-[\]!/]+$/;

/**
 * A number that came from the caller or from a wildcard pattern (`_0X.` matches anything after
 * the 0), reduced at run time to the characters of a number. Asterisk substitutes variables
 * before an application splits its arguments, so an unfiltered `${EXTEN}` holding `&` or `,`
 * could add a channel to Dial() or retarget a Goto().
 */
export function runtimeDigits(expression: string): string {
  return `\${FILTER(0-9*#+,${expression})}`;
}

/**
 * Guards identifiers and numbers that the schema already constrained (extensions, context names,
 * dial patterns). Throwing is right: reaching here with anything else is a compiler bug.
 */
export function assertToken(value: string, what: string): string {
  if (!TOKEN.test(value)) throw new Error(`refusing to emit ${what} ${JSON.stringify(value)}`);
  return value;
}
