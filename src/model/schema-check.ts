// Checks data against the OrgState JSON Schema with ajv (defaults filled in from the schema) and
// turns ajv's errors into messages a person editing a YAML file can act on.
import { type TSchema, Type } from "@sinclair/typebox";
import type { ErrorObject, Options, ValidateFunction } from "ajv";
import { E164_PATTERN } from "./consent.js";
import { CRM_TAG, CUSTOM_FIELD_NAME, EMAIL } from "./crm.js";
import type { Diagnostic } from "./diagnostic.js";
import { formatPath, type PathSegment, pointerSegments } from "./diagnostic-path.js";
import { SIP_ADDRESS, SIP_ADDRESS_RULE } from "./engine-node.js";
import { OrgExtrasProperties } from "./org-extras.js";
import generatedValidator from "./org-file-validator.generated.js";
import {
  CALENDAR_DATE,
  ContextPrefix,
  DialPattern,
  Did,
  EnvName,
  Extension,
  Hex32,
  Host,
  HostOrRange,
  MEDIA_FILE_NAME,
  MOH_CLASS,
  Name,
  ONE_LINE,
  Org,
  OrgStateSchema,
  PhoneNumber,
  PRINTABLE_ASCII,
  Slug,
  TIME_OF_DAY,
  TIME_ZONE_NAME,
  TimeConditionName,
  TrunkName,
  TUNNEL_HOST,
  Uuid,
} from "./org-state.js";
import { ISO_INSTANT } from "./time-conditions.js";
import { WG_CIDR, WG_ENDPOINT, WG_INTERFACE } from "./wireguard.js";

/**
 * What an org file may hold: OrgState, except that `org.context_prefix` may be left out (it
 * defaults to `org_<id>_`), plus the optional webhooks and platform users (org-extras.ts).
 * Derived from the shared schema, so the two cannot drift.
 */
export const OrgFileSchema = Type.Object(
  {
    ...OrgStateSchema.properties,
    org: Type.Object(
      { ...Org.properties, context_prefix: Type.Optional(ContextPrefix) },
      { additionalProperties: false },
    ),
    ...OrgExtrasProperties,
  },
  { additionalProperties: false, $id: "OrgFile" },
);

/** A schema problem; `at: "key"` places it on the mapping key rather than the value. */
export interface SchemaDiagnostic extends Diagnostic {
  at?: "key";
}

const PATTERN_MESSAGES = new Map<string | undefined, string>([
  [Uuid.pattern, "must be a UUID"],
  [Name.pattern, "must be on one line (no control characters)"],
  [Extension.pattern, "must be 2-15 digits"],
  [MOH_CLASS, "must be a music-on-hold class: letters, digits, _ and -, at most 40"],
  [
    MEDIA_FILE_NAME,
    "must be a file name without .wav: lowercase letters, digits, _ and -, at most 64",
  ],
  [PhoneNumber.pattern, "must be a phone number: optional +, then 7-15 digits"],
  [E164_PATTERN, "must be an E.164 number: +, then 7-15 digits, not starting with 0"],
  [Did.properties.number.pattern, "must be a number: optional +, then 6-15 digits"],
  [Hex32.pattern, "must be 32 lowercase hex digits (an MD5 digest)"],
  [
    EnvName.pattern,
    "must be an environment variable name (A-Z, 0-9, _; not starting with a digit)",
  ],
  [Slug.pattern, "must be a slug: lowercase letters, digits and -, at most 63"],
  [TrunkName.pattern, "must be lowercase letters, digits, _ and -, at most 32"],
  [ContextPrefix.pattern, "must start with a letter, hold letters, digits, _ or -, and end with _"],
  [DialPattern.pattern, "must be a dial pattern (_0X., _[2-9]XXXXXXXXX) or a literal number"],
  [Host.pattern, "must be a host name, an IPv4 address or an [IPv6] address"],
  [HostOrRange.pattern, "must be a host name, an IP address or a CIDR range (10.0.0.0/8)"],
  [ONE_LINE, "must be on one line (no control characters)"],
  [TimeConditionName.pattern, "must be lowercase letters, digits, _ and -, at most 28"],
  [TIME_ZONE_NAME, "must be an IANA time zone name, such as Europe/London"],
  [TIME_OF_DAY, "must be a time of day, HH:MM (00:00 to 24:00)"],
  [CALENDAR_DATE, "must be a date, YYYY-MM-DD"],
  [ISO_INSTANT, "must be an ISO 8601 time with its offset, such as 2026-03-27T18:30:00Z"],
  [PRINTABLE_ASCII, "must be printable ASCII, no spaces"],
  ["^[A-Za-z0-9._+@-]{1,64}$", "must be 1-64 letters, digits or . _ + @ -"],
  ["^[0-9*#+]{0,20}$", "must be at most 20 digits, * # or +"],
  ["^[A-Za-z0-9-]{1,40}$", "must be 1-40 letters, digits or -"],
  ["^[A-Za-z0-9_-]{1,60}$", "must be 1-60 letters, digits, _ or -"],
  ["^[A-Za-z0-9_-]{1,64}$", "must be 1-64 letters, digits, _ or -"],
  ["^greeting_ivr_[0-9a-fA-F-]{36}$", "must be greeting_ivr_ followed by the IVR's UUID"],
  // API-only patterns (the length is checked separately there).
  ["^[0-9]*$", "must be digits only"],
  ["^[A-Za-z0-9-]*$", "must be letters, digits or - only"],
  ["^[A-Za-z0-9_-]*$", "must be letters, digits, _ or - only"],
  ["^[A-Za-z0-9_-]+$", "must be letters, digits, _ or - only"],
  // Call listings (`/calls*`).
  ["^[0-9*#+]{1,20}$", "must be 1-20 digits, * # or +"],
  ["^[0-9]{3,20}$", "must be 3-20 digits"],
  ["^[A-Za-z0-9_.-]{1,150}$", "must be an engine call id: 1-150 letters, digits, . _ or -"],
  ["^\\+?[0-9]{2,15}$", "must be an extension or a phone number: optional +, then 2-15 digits"],
  // CRM (`/crm/*`).
  [EMAIL, "must be an e-mail address (name@domain.tld, no spaces)"],
  [CRM_TAG, "must be 1-40 letters, digits, _ . : or -"],
  [CUSTOM_FIELD_NAME, "must be 1-40 lowercase letters, digits or _, starting with a letter"],
  // Customer tunnels (`/customer-tunnels/*`).
  [WG_CIDR, "must be an address with a prefix length (10.99.0.1/30, fd00::1/64)"],
  [WG_ENDPOINT, "must be host:port (vpn.example.com:51820, [2001:db8::1]:51820)"],
  [WG_INTERFACE, "must be an interface name: 1-15 letters, digits or _ = + . -"],
  [TUNNEL_HOST, "must be an IPv4 address or an [IPv6] address"],
  // Engine nodes (`/admin/engine-nodes`).
  [SIP_ADDRESS, SIP_ADDRESS_RULE],
  // Call-flow questions (`pbxctl simulate`, flow files, `POST /simulate`).
  ["^\\+?[0-9]{3,20}$", "must be a number: optional +, then 3-20 digits"],
  ["^[0-9*#]{0,15}$", "must be at most 15 keys: digits, * or #"],
  [
    "^[0-9*#]{0,15}(,[0-9*#]{0,15}){0,49}$",
    'must be the keys of each prompt separated by commas ("1,3"): at most 15 digits, * or # per prompt, at most 50 prompts',
  ],
]);

/** Said of a value breaking a pattern that has no rule in words above: never the regex itself. */
export const UNKNOWN_PATTERN_MESSAGE = "contains characters that are not allowed here";

/** The plain-words rule behind one of the model's patterns, or undefined for another pattern. */
export function patternMessage(pattern: string | undefined): string | undefined {
  return PATTERN_MESSAGES.get(pattern);
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  integer: "a whole number",
  number: "a number",
  boolean: "true or false",
  array: "a list",
  object: "a mapping",
  null: "empty",
};

/**
 * How the org file schema is compiled: defaults filled, every error, and each error with its
 * schema (`parentSchema`, read by the messages below).
 */
export const ORG_FILE_AJV_OPTIONS: Options = { useDefaults: true, allErrors: true, verbose: true };

/**
 * OrgFileSchema compiled with ORG_FILE_AJV_OPTIONS at build time (ajv's standalone code,
 * scripts/generate-org-file-validator.ts): compiling it at run time cost every process that
 * checks a file about 0.2 s and loading ajv's compiler.
 */
const validateOrgFile = generatedValidator as unknown as ValidateFunction;

/**
 * Validates `data` in place against the org file schema, filling defaults; returns every
 * problem, one per offending node, with a readable message.
 */
export function checkOrgFileSchema(data: unknown): SchemaDiagnostic[] {
  const validate = validateOrgFile;
  if (validate(data)) return [];
  return readableErrors(validate.errors ?? []);
}

/** ajv errors -> one readable diagnostic per problem (unions collapsed to one message). */
export function readableErrors(errors: readonly ErrorObject[]): SchemaDiagnostic[] {
  const consumed = new Set<ErrorObject>();
  const out: SchemaDiagnostic[] = [];
  // Outer unions first, so that a union of unions collapses into the outermost one.
  const unions = errors
    .filter((e) => e.keyword === "anyOf")
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const union of unions) {
    if (consumed.has(union)) continue;
    consumed.add(union);
    const inside = errors.filter(
      (e) => e !== union && e.schemaPath.startsWith(`${union.schemaPath}/`),
    );
    const choices = literalChoices(union.parentSchema as TSchema);
    if (choices) {
      for (const e of inside) consumed.add(e);
      const list = choices.values.join(", ");
      out.push({
        severity: "error",
        path: formatPath(pointerSegments(union.instancePath)),
        message: `must be one of: ${list}${choices.nullable ? " (or empty)" : ""}`,
      });
    } else {
      // A value that is "X or null": the null branch's complaint says nothing useful.
      for (const e of inside) {
        if (e.keyword === "type" && e.params.type === "null") consumed.add(e);
      }
    }
  }
  for (const error of errors) {
    if (consumed.has(error)) continue;
    out.push(describe(error));
  }
  const seen = new Set<string>();
  return out.filter((d) => {
    const key = `${d.path}\n${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function describe(error: ErrorObject): SchemaDiagnostic {
  const segments: PathSegment[] = pointerSegments(error.instancePath);
  const at = (extra: PathSegment[] = []) => formatPath([...segments, ...extra]);
  switch (error.keyword) {
    case "required":
      return {
        severity: "error",
        path: at([error.params.missingProperty as string]),
        message: "is required",
      };
    case "additionalProperties":
      return {
        severity: "error",
        path: at([error.params.additionalProperty as string]),
        message: `unknown field "${error.params.additionalProperty}"`,
        at: "key",
      };
    case "type": {
      const types = String(error.params.type).split(",");
      const names = types.map((t) => TYPE_NAMES[t] ?? t).join(" or ");
      return { severity: "error", path: at(), message: `must be ${names}` };
    }
    case "pattern": {
      const schema = error.parentSchema as { pattern?: string; description?: string } | undefined;
      const known = patternMessage(schema?.pattern);
      const message =
        known ??
        (schema?.description ? `must match ${schema.description}` : UNKNOWN_PATTERN_MESSAGE);
      return { severity: "error", path: at(), message };
    }
    case "uniqueItems":
      // ajv: item j (the later one) equals item i.
      return {
        severity: "error",
        path: at([error.params.j as number]),
        message: `is the same as item [${error.params.i}]`,
      };
    case "const":
      return {
        severity: "error",
        path: at(),
        message: `must be ${JSON.stringify(error.params.allowedValue)}`,
      };
    default:
      return { severity: "error", path: at(), message: error.message ?? "is invalid" };
  }
}

/** The allowed literals of a union made only of constants (and maybe null), else null. */
function literalChoices(
  schema: TSchema | undefined,
): { values: string[]; nullable: boolean } | null {
  const values: string[] = [];
  let nullable = false;
  const walk = (s: TSchema): boolean => {
    if (Array.isArray(s.anyOf)) return s.anyOf.every(walk);
    if (s.const !== undefined) {
      values.push(String(s.const));
      return true;
    }
    if (s.type === "null") {
      nullable = true;
      return true;
    }
    return false;
  };
  if (!schema || !walk(schema) || values.length === 0) return null;
  return { values, nullable };
}
