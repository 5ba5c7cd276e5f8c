// What a webhook may be saved with (the API and `pbxctl apply` alike): its event names, its target
// URL (what can be checked without the network), its secret and its numeric controls. Each check
// throws a BadRequest with the message the API answers.
import { isIP } from "node:net";
import { isWebhookEvent, WEBHOOK_EVENTS, type WebhookEvent } from "../../webhooks/events.js";
import { SECRET_LENGTH, URL_MAX_LENGTH } from "../../webhooks/policy.js";
import {
  isNonPublicAddress,
  PRIVATE_TARGET_MESSAGE,
  type UrlPolicy,
} from "../../webhooks/url-guard.js";
import { BadRequest } from "../errors.js";

/** `value` as an event type, or a BadRequest saying why it is not one. */
export function parseWebhookEvent(value: string): WebhookEvent {
  if (isWebhookEvent(value)) return value;
  if (value.startsWith("ivr.")) throw new BadRequest("ivr.* events are not implemented");
  throw new BadRequest(`Unknown event type: ${value} (allowed: ${WEBHOOK_EVENTS.join(", ")})`);
}

/** A non-empty, duplicate-free list of event types, in the order given. */
export function parseWebhookEvents(values: readonly string[]): WebhookEvent[] {
  if (values.length === 0) throw new BadRequest("events must list at least one event type");
  const events: WebhookEvent[] = [];
  const problems: string[] = [];
  for (const value of values) {
    try {
      events.push(parseWebhookEvent(value));
    } catch (error) {
      if (!(error instanceof BadRequest)) throw error;
      if (!problems.includes(error.message)) problems.push(error.message);
    }
  }
  // Every bad name at once, not the first of them.
  if (problems.length > 0) throw new BadRequest(problems.join("; "));
  return [...new Set(events)];
}

/** RFC 6761: `localhost` and every name under it are loopback, whatever a resolver says. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

/** `raw` as a normalized http(s) URL a webhook may target, or a BadRequest saying why not. */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy): Promise<string> {
  if (raw.length > URL_MAX_LENGTH) {
    throw new BadRequest(`url must be at most ${URL_MAX_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequest("url must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new BadRequest("url must be an absolute http or https URL");
  }
  if (url.hostname === "") throw new BadRequest("url must name a host");
  if (!policy.allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const loopbackName = isLocalhostName(host);
    if (loopbackName || (isIP(host) && isNonPublicAddress(host))) {
      throw new BadRequest(PRIVATE_TARGET_MESSAGE);
    }
  }
  return url.toString();
}

/** `value` when it is an integer within `bounds`; a BadRequest naming `name` otherwise. */
export function checkInteger(
  name: string,
  value: number,
  bounds: { min: number; max: number },
): number {
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw new BadRequest(`${name} must be an integer from ${bounds.min} to ${bounds.max}`);
  }
  return value;
}

/** A signing secret of the allowed length, printable ASCII without spaces. */
export function checkSecret(secret: string): string {
  if (secret.length < SECRET_LENGTH.min || secret.length > SECRET_LENGTH.max) {
    throw new BadRequest(
      `secret must be ${SECRET_LENGTH.min} to ${SECRET_LENGTH.max} characters long`,
    );
  }
  if (/[^\x21-\x7e]/.test(secret)) {
    throw new BadRequest("secret must be printable ASCII without spaces");
  }
  return secret;
}
