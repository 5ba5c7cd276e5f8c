// A phone's registration as the engine reports it: Asterisk 22's PJSIP `ContactStatus` AMI event
// (one per contact of an AOR). `Removed` is a contact unregistered or expired; every other status
// says the contact exists: a phone registering shows up as `NonQualified` (what Asterisk 22 sends
// for an AOR without qualify_frequency, as the generated ones are: recorded in the engine test),
// or `Created`, `Reachable`, `Unreachable`, `Updated`... Whether that is news is decided against
// the stored contacts (src/domain/registration-ingest.ts), never from the status alone. Outbound (trunk) `Registry` events are not read:
// they carry the registration's client and server URIs, not its section name, so nothing in
// them names the org (docs/calls.md "Registration webhooks").
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
