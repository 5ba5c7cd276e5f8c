// What goes on the wire for one attempt: the body of SPEC.md §6 and its headers, the PBX ones
// and the Standard Webhooks ones.
import { pbxSignature, standardWebhooksSignature } from "./signature.js";

export interface WireInput {
  /** `<webhookId>_<event time in µs>`: the same on every attempt of one delivery. */
  messageId: string;
  attempt: number;
  eventType: string;
  orgId: string;
  /** JSON text of the event's data, as stored. */
  data: string;
  /** When this attempt is sent (and signed). */
  sentAt: Date;
  secret: string | null;
}

export interface WireRequest {
  /** `<messageId>_<attempt>`. */
  id: string;
  body: string;
  headers: Record<string, string>;
}

export const USER_AGENT = "pbxctl-webhooks/1";

/** The exact body bytes and headers of one attempt. */
export function buildWireRequest(input: WireInput): WireRequest {
  const id = `${input.messageId}_${input.attempt}`;
  const timestamp = input.sentAt.toISOString();
  // Written by hand so the stored data is embedded byte for byte and the key order is fixed.
  const body =
    `{"id":${JSON.stringify(id)},"event":${JSON.stringify(input.eventType)},` +
    `"timestamp":${JSON.stringify(timestamp)},"organization_id":${JSON.stringify(input.orgId)},` +
    `"data":${input.data},"attempt":${input.attempt}}`;
  const unixSeconds = Math.floor(input.sentAt.getTime() / 1000);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "x-pbx-event": input.eventType,
    "x-pbx-organization": input.orgId,
    "x-pbx-timestamp": timestamp,
    "x-pbx-attempt": String(input.attempt),
    "webhook-id": input.messageId,
    "webhook-timestamp": String(unixSeconds),
  };
  if (input.secret !== null) {
    headers["x-pbx-signature"] = pbxSignature(body, input.secret);
    headers["webhook-signature"] = standardWebhooksSignature(
      input.messageId,
      unixSeconds,
      body,
      input.secret,
    );
  }
  return { id, body, headers };
}
