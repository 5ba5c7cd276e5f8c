// Names of the Asterisk objects generated for an org. Every name starts with the org's context
// prefix, so tenants can never collide, and every suffix is short: Asterisk silently cuts context
// and extension names at 79 characters (ASTERISK.md), and `org_<uuid>_` alone takes 41.

/** Longest context or extension name Asterisk keeps whole (AST_MAX_CONTEXT - 1). */
export const MAX_NAME = 79;

/** Contexts and objects of one org. */
export function orgNames(prefix: string) {
  return {
    internal: `${prefix}internal`,
    incoming: `${prefix}incoming`,
    ivr: `${prefix}ivr`,
    ivrMenu: (extension: string) => `${prefix}ivrm_${extension}`,
    queue: `${prefix}queue`,
    outbound: `${prefix}outbound`,
    /** How each user is rung (softphone or mobile), shared by direct calls and queues. */
    dial: `${prefix}dial`,
    /** Per-caller outbound profile: caller ID and recording, looked up by bare extension. */
    caller: `${prefix}caller`,
    /** Starts recording once per call. */
    record: `${prefix}record`,
    /** One extension per alias of a number that refused recording (only looked up, never run). */
    consentRefused: `${prefix}consent_refused`,
    /** voicemail.conf context of the org's mailboxes. */
    voicemail: `${prefix}vm`,
    /** musiconhold.conf class of the org's own hold music (only while it has files). */
    mohClass: `${prefix}moh`,
    /** Where a call put on hold through the API waits (its held party and the phone's leg). */
    hold: `${prefix}hold`,
    /** Per-org concurrent call limit. */
    limit: `${prefix}limit`,
    /** Queue member legs (Local channels carrying the member's ring time). */
    queueMember: `${prefix}qmember`,
    endpoint: (extension: string) => `${prefix}${extension}`,
    trunk: (name: string) => `${prefix}trunk_${name}`,
    queueName: (number: string) => `${prefix}q${number}`,
    /** A time condition's context: its checks at `s`, then `open`, `closed` and `x<n>` (exceptions). */
    timeCondition: (name: string) => `${prefix}tc_${name}`,
    /** Group category used with GROUP()/GROUP_COUNT() for the concurrent call limit. */
    callGroup: "orgcalls",
  };
}

export type OrgNames = ReturnType<typeof orgNames>;

/** The context the carrier trunk delivers inbound calls to; the gateway file defines it. */
export const GATEWAY_CONTEXT = "gateway-inbound";

/** Directory of an org's generated files, relative to the engine config directory. */
export function orgDir(prefix: string): string {
  return `orgs/${prefix}`;
}

/**
 * Call-record variables the dialplan sets with `Set(CDR(<name>)=...)`; `pbxctl engine init` maps
 * them into every AMI `Cdr` event (cdr_manager.conf), where call ingest reads them.
 */
export const CDR_VARIABLES = {
  /** `inbound` on a DID's entry, `outbound` on an outbound route; unset on internal calls. */
  direction: "call_direction",
  /** The recording's path under the monitor directory, set where MixMonitor starts. */
  recording: "recording_file",
} as const;
