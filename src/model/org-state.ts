// The one definition of an organization's configuration (OrgState) and of the inbound gateway
// (GatewayState). YAML files, store rows and the compiler all speak this shape; the JSON Schema
// below validates it (ajv, with defaults filled in) and documents it in OpenAPI.
//
// Character sets are strict on purpose: every value here can end up in Asterisk syntax, where a
// newline opens a new directive, `[` a section and `;` a comment. Free text (names, descriptions)
// may hold anything printable; the compiler escapes it for the exact place it lands. Numbers,
// extensions and identifiers are held to their character set instead of being escaped.

import {
  type SchemaOptions,
  type Static,
  type TLiteral,
  type TSchema,
  type TUnion,
  Type,
} from "@sinclair/typebox";
import { E164_PATTERN } from "./consent.js";

/** Printable text on one line: no control characters (newline, CR, NUL, DEL, ...). */
export const ONE_LINE = "^[^\\u0000-\\u001f\\u007f]*$";

export const Uuid = Type.String({
  pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
  description: "UUID",
});
export const Name = Type.String({ minLength: 1, maxLength: 100, pattern: ONE_LINE });
export const Label = Type.String({ maxLength: 500, pattern: ONE_LINE });
/** Internal extension of a user, IVR or queue: digits only. */
export const Extension = Type.String({ pattern: "^[0-9]{2,15}$", description: "digits, 2-15" });
/** A music-on-hold class name as musiconhold.conf spells it. */
export const MOH_CLASS = "^[A-Za-z0-9_-]{1,40}$";
/** An uploaded sound file's name (greeting or music on hold), without `.wav`. */
export const MEDIA_FILE_NAME = "^[a-z0-9_-]{1,64}$";
/** Passwords: printable ASCII, no spaces (they reach config files and SIP digests verbatim). */
export const PRINTABLE_ASCII = "^[\\u0021-\\u007e]+$";
/** A phone number as written by people: optional `+`, then 7-15 digits. */
export const PhoneNumber = Type.String({ pattern: "^\\+?[0-9]{7,15}$" });
export const Hex32 = Type.String({ pattern: "^[0-9a-f]{32}$" });
export const EnvName = Type.String({ pattern: "^[A-Z_][A-Z0-9_]{0,63}$" });
export const Slug = Type.String({ pattern: "^[a-z0-9][a-z0-9-]{0,62}$" });
export const TrunkName = Type.String({ pattern: "^[a-z0-9][a-z0-9_-]{0,31}$" });
/** `org_<uuid>_` fits in 41 characters; 48 leaves room for the longest context suffix. */
export const ContextPrefix = Type.String({ pattern: "^[A-Za-z][A-Za-z0-9_-]{0,46}_$" });
/** An Asterisk dial pattern (`_0X.`, `_[2-9]XXXXXXXXX`) or a literal number. */
export const DialPattern = Type.String({
  pattern: "^(_[0-9XNZxnz.!*#+\\[\\]-]{1,40}|[0-9*#+]{1,40})$",
});
export const Host = Type.String({ pattern: "^([A-Za-z0-9.-]{1,253}|\\[[0-9A-Fa-f:.]{2,45}\\])$" });
/** What `type=identify` matches: a host, or an address range in CIDR form. */
/** An IVR voicemail option's mailbox: digits only (voicemail.conf key and VoiceMail() argument). */
export const VOICEMAIL_MAILBOX = "^[0-9]{1,20}$";

/** The one rule for a voicemail mailbox; `validate` and the compiler both ask it. */
export function isVoicemailMailbox(value: string): boolean {
  return new RegExp(VOICEMAIL_MAILBOX).test(value);
}

export const HostOrRange = Type.String({
  pattern: "^([A-Za-z0-9.-]{1,253}|\\[[0-9A-Fa-f:.]{2,45}\\]|[0-9A-Fa-f:.]{2,45}/[0-9]{1,3})$",
});

/**
 * The minimum and maximum of one of the model's integer fields, so that a request schema
 * documenting the field in its own words still accepts exactly what the engine accepts.
 */
export function boundsOf(schema: TSchema): { minimum: number; maximum: number } {
  const { minimum, maximum } = schema as { minimum?: number; maximum?: number };
  if (minimum === undefined || maximum === undefined) {
    throw new Error("boundsOf: the model leaves this integer unbounded");
  }
  return { minimum, maximum };
}

export const ORG_STATUSES = ["pending", "active", "suspended", "inactive"] as const;
export const ROUTING_TYPES = ["human", "ai_agent"] as const;
export const RING_TARGETS = ["ext", "phone"] as const;
export const QUEUE_STRATEGIES = [
  "ringall",
  "leastrecent",
  "fewestcalls",
  "random",
  "rrmemory",
  "linear",
  "wrandom",
] as const;
export const QUEUE_TIMEOUT_TYPES = ["none", "user", "queue", "phone", "time_condition"] as const;
export const IVR_DIGITS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "*", "#"] as const;
export const ACTION_TYPES = [
  "extension",
  "queue",
  "ivr",
  "ai_agent",
  "voicemail",
  "callback",
  "hangup",
  "time_condition",
] as const;
export const DID_ROUTING_TYPES = [
  "extension",
  "queue",
  "ivr",
  "external",
  "time_condition",
] as const;
/** Where a time condition sends a call when open, when closed, or on a dated exception. */
export const TIME_CONDITION_DESTINATION_TYPES = [
  "extension",
  "queue",
  "ivr",
  "voicemail",
  "external",
  "hangup",
] as const;
/** Days of a weekly range, Monday first. */
export const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
/** A time of day, 24-hour `HH:MM`; `24:00` is the end of the day (a range's end only). */
export const TIME_OF_DAY = "^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$";
/** A calendar date, `YYYY-MM-DD` (whether the day exists is validate.ts's check). */
export const CALENDAR_DATE = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";
/**
 * The characters of an IANA time zone name (`Europe/London`, `America/Argentina/Buenos_Aires`,
 * `Etc/GMT+5`); validate.ts then checks the name against the zones Node knows. It lands in
 * GotoIfTime's argument, so `,`, `?`, `)` and `$` can never pass.
 */
export const TIME_ZONE_NAME = "^[A-Za-z][A-Za-z0-9_+/-]{0,63}$";
/** A time condition's name: its dialplan context is `<prefix>tc_<name>`, within 79 characters. */
export const TimeConditionName = Type.String({ pattern: "^[a-z0-9][a-z0-9_-]{0,27}$" });
export const ROUTING_ENVIRONMENTS = ["prod", "staging", "oss"] as const;
export const POOL_STATUSES = ["available", "pending", "assigned", "reserved"] as const;
/**
 * Where a DID came from: `pool`, the platform's (the shared gateway dispatches it from every
 * carrier), or `org`, added by the org itself (only its own trunks deliver it).
 */
export const DID_SOURCES = ["pool", "org"] as const;
export const CODECS = ["ulaw", "alaw", "g722", "g729", "gsm", "opus", "slin"] as const;
export const TRANSPORTS = ["udp", "tcp", "tls"] as const;

type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };

/** A union of string literals from a const list, so the list and the type cannot drift. */
function literals<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnion<Literals<T> & TSchema[]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as never;
}

export const OrgSettings = Type.Object(
  {
    recording_enabled: Type.Boolean({
      default: true,
      description: "org-wide recording switch; false records nothing whatever the user flags say",
    }),
    max_concurrent_calls: Type.Integer({
      minimum: 0,
      maximum: 100_000,
      default: 0,
      description: "calls over this limit hear a busy prompt; 0 means no limit",
    }),
  },
  { additionalProperties: false, default: {} },
);

export const Org = Type.Object(
  {
    id: Uuid,
    name: Name,
    slug: Type.Optional(Slug),
    context_prefix: ContextPrefix,
    status: literals(ORG_STATUSES, { default: "active" }),
    settings: OrgSettings,
  },
  { additionalProperties: false },
);

export const SipCredential = Type.Object(
  {
    md5_cred: Type.Optional(
      Type.Union([Hex32], {
        description: 'hex MD5 of "<username>:<realm>:<password>"; see SIP_REALM',
      }),
    ),
    password_env: Type.Optional(EnvName),
  },
  { additionalProperties: false },
);

export const User = Type.Object(
  {
    id: Type.Optional(Uuid),
    extension: Extension,
    name: Name,
    routing_type: literals(ROUTING_TYPES, { default: "human" }),
    status: Type.Union([Type.Literal("active"), Type.Literal("inactive")], { default: "active" }),
    ring_target: literals(RING_TARGETS, { default: "ext" }),
    phone_number: Type.Union([PhoneNumber, Type.Null()], {
      default: null,
      description: "mobile number rung when ring_target is phone",
    }),
    ring_time: Type.Integer({ minimum: 1, maximum: 600, default: 30 }),
    outbound_did: Type.Union([Type.String({ maxLength: 20, pattern: ONE_LINE }), Type.Null()], {
      default: null,
    }),
    call_recording: Type.Boolean({ default: true }),
    sip: Type.Optional(SipCredential),
  },
  { additionalProperties: false },
);

export const QueueMember = Type.Object(
  {
    extension: Extension,
    penalty: Type.Integer({ minimum: 0, maximum: 1000, default: 0 }),
    ring_time: Type.Integer({ minimum: 1, maximum: 600, default: 20 }),
  },
  { additionalProperties: false },
);

export const Queue = Type.Object(
  {
    id: Type.Optional(Uuid),
    number: Extension,
    name: Name,
    strategy: literals(QUEUE_STRATEGIES, { default: "ringall" }),
    moh: Type.String({ pattern: MOH_CLASS, default: "default" }),
    max_wait: Type.Integer({
      minimum: 0,
      maximum: 86_400,
      default: 300,
      description: "seconds; 0 waits forever",
    }),
    timeout_destination_type: literals(QUEUE_TIMEOUT_TYPES, { default: "none" }),
    timeout_destination: Type.Union(
      [Type.String({ maxLength: 64, pattern: ONE_LINE }), Type.Null()],
      {
        default: null,
      },
    ),
    members: Type.Array(QueueMember, { default: [] }),
  },
  { additionalProperties: false },
);

// digit and action_type are plain strings in the schema so that validation can answer with the
// specification's own messages (`Invalid digit: <d>`, `Invalid action_type: <v>`).
export const IvrOption = Type.Object(
  {
    digit: Type.String({ maxLength: 8, pattern: ONE_LINE }),
    action_type: Type.String({ maxLength: 32, pattern: ONE_LINE }),
    action_destination: Type.Union(
      [Type.String({ maxLength: 64, pattern: ONE_LINE }), Type.Null()],
      {
        default: null,
      },
    ),
    description: Type.String({ maxLength: 200, pattern: ONE_LINE, default: "" }),
  },
  { additionalProperties: false },
);

export const Ivr = Type.Object(
  {
    id: Type.Optional(Uuid),
    name: Name,
    extension: Extension,
    description: Type.String({ maxLength: 500, pattern: ONE_LINE, default: "" }),
    timeout: Type.Integer({ minimum: 0, maximum: 3600, default: 10 }),
    max_retries: Type.Integer({ minimum: 0, maximum: 100, default: 3 }),
    status: Type.Union([Type.Literal("active"), Type.Literal("inactive")], { default: "active" }),
    greeting_language: Type.String({ pattern: "^[A-Za-z0-9-]{1,40}$", default: "en-IN" }),
    greeting_voice: Type.String({ pattern: "^[A-Za-z0-9_-]{1,60}$", default: "en-IN-Wavenet-D" }),
    greeting_prompt: Type.Union(
      [Type.String({ pattern: "^greeting_ivr_[0-9a-fA-F-]{36}$" }), Type.Null()],
      {
        default: null,
      },
    ),
    direct_extension_dial: Type.Boolean({ default: false }),
    options: Type.Array(IvrOption, { default: [] }),
  },
  { additionalProperties: false },
);

export const Did = Type.Object(
  {
    id: Type.Optional(Uuid),
    number: Type.String({ pattern: "^\\+?[0-9]{6,15}$" }),
    status: Type.Union([Type.Literal("active"), Type.Literal("inactive")], { default: "active" }),
    pool_status: literals(POOL_STATUSES, { default: "assigned" }),
    is_default: Type.Boolean({ default: false }),
    routing_type: Type.Union([literals(DID_ROUTING_TYPES), Type.Null()], { default: null }),
    routing_destination: Type.Union(
      [Type.String({ maxLength: 64, pattern: ONE_LINE }), Type.Null()],
      {
        default: null,
      },
    ),
    routing_environment: literals(ROUTING_ENVIRONMENTS, { default: "prod" }),
    // Optional, and absent means `pool`: org files and older stores name no source.
    source: Type.Optional(
      literals(DID_SOURCES, {
        description:
          "pool (the default): the platform's number, dispatched by the gateway; org: the org's own, delivered by its trunks only",
      }),
    ),
  },
  { additionalProperties: false },
);

/** A trunk's password as written in an org file or sent to the API: PJSIP presents it as is. */
export const TrunkPassword = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: PRINTABLE_ASCII,
});

export const Trunk = Type.Object(
  {
    id: Type.Optional(Uuid),
    name: TrunkName,
    host: Host,
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 5060 }),
    transport: literals(TRANSPORTS, { default: "udp" }),
    username: Type.Union([Type.String({ pattern: "^[A-Za-z0-9._+@-]{1,64}$" }), Type.Null()], {
      default: null,
    }),
    password: Type.Optional(TrunkPassword),
    password_env: Type.Optional(EnvName),
    registration: Type.Boolean({ default: false }),
    codecs: Type.Array(literals(CODECS), { minItems: 1, default: ["ulaw", "alaw"] }),
    match: Type.Array(HostOrRange, {
      default: [],
      maxItems: 50,
      description: "addresses or ranges identifying inbound traffic",
    }),
  },
  { additionalProperties: false },
);

export const OutboundRoute = Type.Object(
  {
    id: Type.Optional(Uuid),
    name: Name,
    patterns: Type.Array(DialPattern, { minItems: 1 }),
    trunk: TrunkName,
    strip_digits: Type.Integer({ minimum: 0, maximum: 20, default: 0 }),
    prepend_digits: Type.String({ pattern: "^[0-9*#+]{0,20}$", default: "" }),
    caller_id_override: Type.Union([PhoneNumber, Type.Null()], { default: null }),
  },
  { additionalProperties: false },
);

const DestinationRef = Type.Union(
  [Type.String({ maxLength: 64, pattern: ONE_LINE }), Type.Null()],
  {
    default: null,
  },
);

/** Open on `days` from `start` until `end`; an end before the start runs past midnight. */
export const TimeRange = Type.Object(
  {
    days: Type.Array(literals(WEEKDAYS), { minItems: 1, maxItems: 7, uniqueItems: true }),
    start: Type.String({ pattern: TIME_OF_DAY, description: "HH:MM, the first open minute" }),
    end: Type.String({
      pattern: TIME_OF_DAY,
      description: "HH:MM, the first closed minute; 24:00 is midnight; before start: the next day",
    }),
  },
  { additionalProperties: false },
);

/** Dated days (a holiday) that override the weekly ranges: closed, or a destination of their own. */
export const TimeException = Type.Object(
  {
    name: Type.String({ maxLength: 100, pattern: ONE_LINE, default: "" }),
    start_date: Type.String({ pattern: CALENDAR_DATE, description: "YYYY-MM-DD, the first day" }),
    end_date: Type.Union([Type.String({ pattern: CALENDAR_DATE }), Type.Null()], {
      default: null,
      description: "YYYY-MM-DD, the last day; empty: start_date only",
    }),
    destination_type: Type.Union([literals(TIME_CONDITION_DESTINATION_TYPES), Type.Null()], {
      default: null,
      description: "empty: closed (the closed destination)",
    }),
    destination: DestinationRef,
  },
  { additionalProperties: false },
);

export const TimeCondition = Type.Object(
  {
    id: Type.Optional(Uuid),
    name: TimeConditionName,
    description: Type.String({ maxLength: 500, pattern: ONE_LINE, default: "" }),
    time_zone: Type.String({
      pattern: TIME_ZONE_NAME,
      description: "IANA time zone the ranges and dates are read in (Europe/London)",
    }),
    ranges: Type.Array(TimeRange, { default: [], maxItems: 50 }),
    exceptions: Type.Array(TimeException, { default: [], maxItems: 100 }),
    open_destination_type: literals(TIME_CONDITION_DESTINATION_TYPES),
    open_destination: DestinationRef,
    closed_destination_type: literals(TIME_CONDITION_DESTINATION_TYPES),
    closed_destination: DestinationRef,
  },
  { additionalProperties: false },
);

export const OrgStateSchema = Type.Object(
  {
    org: Org,
    users: Type.Array(User, { default: [] }),
    queues: Type.Array(Queue, { default: [] }),
    ivrs: Type.Array(Ivr, { default: [] }),
    dids: Type.Array(Did, { default: [] }),
    trunks: Type.Array(Trunk, { default: [] }),
    outbound_routes: Type.Array(OutboundRoute, { default: [] }),
    time_conditions: Type.Array(TimeCondition, { default: [] }),
    music_on_hold: Type.Optional(
      Type.Array(Type.String({ pattern: MEDIA_FILE_NAME }), {
        uniqueItems: true,
        description:
          "the org's music-on-hold files (names without .wav) in <sounds>/moh/<org id>/; with any, the org gets its own class for its queues and holds. The server lists the uploaded files itself",
      }),
    ),
    recording_consent_refused: Type.Optional(
      Type.Array(Type.String({ pattern: E164_PATTERN }), {
        uniqueItems: true,
        description:
          "numbers (E.164) whose owner refused recording: a call from or to one is never recorded, whatever the recording switch says. The server fills it from /compliance/consent",
      }),
    ),
  },
  { additionalProperties: false, $id: "OrgState" },
);

export type OrgState = Static<typeof OrgStateSchema>;
export type OrgInfo = Static<typeof Org>;
export type User = Static<typeof User>;
export type Queue = Static<typeof Queue>;
export type QueueMember = Static<typeof QueueMember>;
export type Ivr = Static<typeof Ivr>;
export type IvrOption = Static<typeof IvrOption>;
export type Did = Static<typeof Did>;
export type Trunk = Static<typeof Trunk>;
export type OutboundRoute = Static<typeof OutboundRoute>;
export type TimeCondition = Static<typeof TimeCondition>;
export type TimeRange = Static<typeof TimeRange>;
export type TimeException = Static<typeof TimeException>;
export type Weekday = (typeof WEEKDAYS)[number];
export type ActionType = (typeof ACTION_TYPES)[number];
export type RoutingEnvironment = (typeof ROUTING_ENVIRONMENTS)[number];

export const GatewayDid = Type.Object(
  {
    number: Did.properties.number,
    routing_environment: Did.properties.routing_environment,
  },
  { additionalProperties: false },
);

/** A SIP URI host of a tunnel address: an IPv4 address or an `[IPv6]` address. */
export const TUNNEL_HOST = "^([0-9.]{7,15}|\\[[0-9A-Fa-f:.]{2,45}\\])$";

/** The org's staging tunnel (`/customer-tunnels`): where its staging DIDs are dialled. */
export const StagingTunnel = Type.Object(
  {
    host: Type.String({
      pattern: TUNNEL_HOST,
      description: "the customer side's tunnel address, as a SIP URI host",
    }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 5060 }),
  },
  { additionalProperties: false },
);

export const GatewayOrg = Type.Object(
  {
    org_id: Uuid,
    context_prefix: ContextPrefix,
    dids: Type.Array(GatewayDid, { default: [] }),
    staging_tunnel: Type.Optional(StagingTunnel),
  },
  { additionalProperties: false },
);

export const GatewayStateSchema = Type.Object(
  {
    environment: literals(ROUTING_ENVIRONMENTS, {
      default: "prod",
      description: "which deployment this engine is; DIDs of the same environment are served here",
    }),
    staging_endpoint: Type.String({
      pattern: "^[A-Za-z0-9_-]{1,64}$",
      default: "staging-tunnel",
      description: "PJSIP endpoint of the private tunnel to the staging deployment",
    }),
    orgs: Type.Array(GatewayOrg, { default: [] }),
  },
  { additionalProperties: false, $id: "GatewayState" },
);

export type GatewayState = Static<typeof GatewayStateSchema>;
export type GatewayOrg = Static<typeof GatewayOrg>;
export type StagingTunnel = Static<typeof StagingTunnel>;

export { SIP_REALM } from "./sip-realm.js";
