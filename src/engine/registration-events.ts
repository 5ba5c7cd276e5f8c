// A phone's registration as the engine reports it: Asterisk 22's PJSIP `ContactStatus` AMI event
// (one per contact of an AOR). `Removed` is a contact unregistered or expired; every other status
// says the contact exists: a phone registering shows up as `NonQualified` (what Asterisk 22 sends
// for an AOR without qualify_frequency, as the generated ones are: recorded in the engine test),
// or `Created`, `Reachable`, `Unreachable`, `Updated`... Whether that is news is decided against
// the stored contacts (src/domain/calls/registration-ingest.ts), never from the status alone.
//
// Outbound (trunk) registrations: the PJSIP `Registry` event carries only the registration's
// client and server URIs and its status, not its section name, and two orgs may register the
// same account at the same carrier, so the event itself names no org. It is used as a signal:
// the engine is then asked `PJSIPShowRegistrationsOutbound`, whose `OutboundRegistrationDetail`
// items name each registration (`ObjectName`, `<context_prefix>trunk_<name>`) with its `Status`.
import type { AmiMessage } from "./ami-connection.js";

export interface ContactChange {
  /** `present`: the contact is registered (new or not); `removed`: it is gone. */
  change: "present" | "removed";
  /** The AOR the contact belongs to: `<context_prefix><extension>` for the org's phones. */
  aor: string;
  endpoint: string;
  /** The contact's SIP URI (the phone's address). */
  uri: string;
}

/** The registration change one AMI event reports, or null when it is not one. */
export function contactChangeOf(event: AmiMessage): ContactChange | null {
  if (String(event.event ?? "").toLowerCase() !== "contactstatus") return null;
  const status = String(event.contactstatus ?? "").toLowerCase();
  if (status === "") return null;
  const aor = String(event.aor ?? "");
  const uri = String(event.uri ?? "");
  if (aor === "" || uri === "") return null;
  return {
    change: status === "removed" ? "removed" : "present",
    aor,
    endpoint: String(event.endpointname ?? ""),
    uri,
  };
}

/** True for a PJSIP outbound registration's status change (`Registry`, ChannelType PJSIP). */
export function isOutboundRegistryEvent(event: AmiMessage): boolean {
  return (
    String(event.event ?? "").toLowerCase() === "registry" &&
    String(event.channeltype ?? "").toLowerCase() === "pjsip"
  );
}

/** The list action that names every outbound registration with its status, and its end event. */
export const LIST_OUTBOUND_REGISTRATIONS = {
  action: { Action: "PJSIPShowRegistrationsOutbound" },
  complete: "OutboundRegistrationDetailComplete",
} as const;

/** One outbound registration as `PJSIPShowRegistrationsOutbound` lists it. */
export interface OutboundRegistration {
  /** The registration's section name: `<context_prefix>trunk_<name>` for an org's trunk. */
  name: string;
  /** Asterisk's status word: `Registered`, `Unregistered`, `Rejected`, `Stopped`... */
  status: string;
  serverUri: string;
  clientUri: string;
}

/** The registration one `OutboundRegistrationDetail` list item describes, or null. */
export function outboundRegistrationOf(item: AmiMessage): OutboundRegistration | null {
  if (String(item.event ?? "").toLowerCase() !== "outboundregistrationdetail") return null;
  const name = String(item.objectname ?? "");
  const status = String(item.status ?? "");
  if (name === "" || status === "") return null;
  return {
    name: name.slice(0, 255),
    status: status.slice(0, 32),
    serverUri: String(item.serveruri ?? "").slice(0, 1024),
    clientUri: String(item.clienturi ?? "").slice(0, 1024),
  };
}
